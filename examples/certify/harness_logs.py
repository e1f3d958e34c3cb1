"""Write inspect_ai logs of three SYNTHETIC scripted "models" on one small task (docs/certify.md,
"From harness logs").

inspect_ai itself writes the logs, offline: its ``mockllm`` provider plays three models
(``mockllm/syn-strong``, ``mockllm/syn-mid``, ``mockllm/syn-weak``) whose answers are scripted
here. The task ``syn_paper_qa`` has 40 yes/no questions, four from each of 10 invented papers
(sample metadata ``paper``: the cluster), scored by inspect_ai's ``match()``, run for 2 epochs.
Nothing here was measured on a real model. By construction (written down by hand):

* ``syn-strong`` answers every question right, except the 4 of paper ``syn-p09`` (wrong);
* ``syn-mid`` is right on the questions whose index is even, and on the odd ones in its
  first epoch only (a sample half right on average: epochs are averaged);
* ``syn-weak`` is right on 8 questions (index divisible by 5), and its model raises on
  question 39 (an errored sample, counted as a failed run, never dropped).

So the true accuracy is 0.90, 0.75 and 0.20; strong vs weak is the planted large difference.

Run from the repository root (needs the ``import`` extra, i.e. inspect-ai):

    .venv/bin/python examples/certify/harness_logs.py --out /tmp/syn-logs

:func:`write_logs` is also what tests/certify/test_harness_logs.py runs, with variations of the
task (another dataset, another scorer) to show refusals.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

TASK = "syn_paper_qa"
N_QUESTIONS = 40
PER_PAPER = 4
EPOCHS = 2
MODELS = ("syn-strong", "syn-mid", "syn-weak")
ERRORED = 39  # the question syn-weak's model raises on


def question(i: int) -> str:
    return f"Q{i:02d}: does paper syn-p{i // PER_PAPER:02d} report effect {i}? Answer yes or no."


def truth(i: int) -> str:
    return "yes" if i % 3 else "no"


def right(model: str, i: int, epoch: int) -> bool:
    """Whether ``model`` answers question ``i`` right in its ``epoch``-th answer (1-based)."""
    if model == "syn-strong":
        return i // PER_PAPER != 9
    if model == "syn-mid":
        return i % 2 == 0 or epoch == 1
    return i % 5 == 0


def scripted(model: str) -> Callable[..., Any]:
    """mockllm's model function for ``model``: the answer :func:`right` says, per epoch (the
    n-th time a question is asked is its n-th epoch)."""
    from inspect_ai.model import ModelOutput

    asked: dict[int, int] = {}

    def answer(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
        i = int(messages[0].text[1:3])
        asked[i] = asked.get(i, 0) + 1
        if model == "syn-weak" and i == ERRORED:
            raise RuntimeError("syn-weak backend failed")
        good = right(model, i, asked[i])
        text = truth(i) if good else ("no" if truth(i) == "yes" else "yes")
        return ModelOutput.from_content(f"mockllm/{model}", text)

    return answer


def task(dataset_name: str | None = None, scorer: str = "match", changed: int | None = None) -> Any:
    """The task; ``dataset_name`` names its dataset, ``scorer`` is ``match`` or ``includes``,
    ``changed`` rewrites that question's target (a dataset whose samples differ)."""
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.scorer import includes, match
    from inspect_ai.solver import generate

    samples = [
        Sample(
            id=f"q{i:02d}",
            input=question(i),
            target=("maybe" if i == changed else truth(i)),
            metadata={"paper": f"syn-p{i // PER_PAPER:02d}"},
        )
        for i in range(N_QUESTIONS)
    ]
    return Task(
        name=TASK,
        dataset=MemoryDataset(samples, name=dataset_name),
        solver=[generate()],
        scorer=match() if scorer == "match" else includes(),
        epochs=EPOCHS,
    )


def write_logs(out: Path, models: tuple[str, ...] = MODELS, **variant: Any) -> list[Path]:
    """One ``.eval`` log per model of ``models`` written by inspect_ai into ``out``;
    ``variant`` goes to :func:`task`."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    # mockllm counts input tokens with tiktoken, which downloads its encoding on first use; to
    # stay offline the count is a constant (as in tests/runs/importers/mock_inspect.py).
    with mock.patch("inspect_ai.model._model.count_text_tokens", return_value=7):
        logs = inspect_eval(
            task(**variant),
            model=[get_model(f"mockllm/{m}", custom_outputs=scripted(m)) for m in models],
            log_dir=str(out),
            log_format="eval",
            display="none",
            fail_on_error=False,
        )
    return [Path(log.location) for log in logs]


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "--out":
        print("usage: harness_logs.py --out FOLDER  (its .eval logs are replaced)", file=sys.stderr)
        return 2
    out = Path(argv[1])
    # the folder's earlier .eval logs are replaced: a second run beside them would put two logs
    # of each model in it (kit certify refuses that, exit 2)
    for stale in sorted(out.glob("*.eval")) if out.is_dir() else []:
        stale.unlink()
        print(f"harness_logs: removed the earlier {stale}")
    for path in write_logs(out):
        print(f"harness_logs: wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
