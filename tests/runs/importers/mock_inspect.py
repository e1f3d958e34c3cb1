"""Run a task with inspect_ai's offline ``mockllm`` model and return the ``.eval`` log it wrote.

mockllm counts input tokens with tiktoken, which downloads its encoding on first use; the tests
must run offline, so that count is replaced by a constant while the task runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest import mock


def write_mock_log(task: Any, outputs: list[Any], log_dir: Path, **eval_options: Any) -> Path:
    """``inspect_ai.eval`` of ``task`` with mockllm answering ``outputs`` in turn; the log path."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    with mock.patch("inspect_ai.model._model.count_text_tokens", return_value=7):
        [log] = inspect_eval(
            task,
            model=get_model("mockllm/model", custom_outputs=outputs),
            log_dir=str(log_dir),
            log_format="eval",
            display="none",
            **eval_options,
        )
    return Path(log.location)
