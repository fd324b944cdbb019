"""Which executor runs the steps of a run, chosen by ``FAIRNESS_EXECUTOR``.

- ``in_process`` (default): every step in the run's process. The steps of one partition run one
  after the other anyway (each needs the one before), a process per step would import the whole
  code location again for every step (seconds each, more than most steps' work at demo size), and
  model weights are loaded once per run.
- ``multiprocess``: one process per step on the machine of the run (steps of independent assets
  in parallel).
- ``celery``: steps are queued on a Celery broker and run by ``dagster-celery`` workers on any
  number of machines (``FAIRNESS_CELERY_BROKER``, default ``pyamqp://guest@127.0.0.1//``;
  ``FAIRNESS_CELERY_BACKEND``, default ``rpc://``). Needs ``pip install -e ".[celery]"``.
- ``k8s``: each step in its own Kubernetes Job (``dagster-k8s``; see docs/operations.md).

The variables are read when the code location loads (the executor is part of the definitions):
``fairness_assets.definitions`` reads the settings model once (``resources.settings.model``;
docs/configuration.md) and passes it to :func:`executor_for`.
"""

from __future__ import annotations

import dagster as dg

from resources.settings import FairnessSettings


def celery_config(settings: FairnessSettings) -> dict:
    """The Celery executor's config: the broker and result backend of ``settings``."""
    return {
        "broker": settings.celery_broker,
        "backend": settings.celery_backend,
        "include": ["fairness_assets.definitions"],
    }


def executor_for(settings: FairnessSettings) -> dg.ExecutorDefinition:
    """The executor ``settings.executor`` names (``FAIRNESS_EXECUTOR``; the settings model refuses
    an unknown name, naming the variable and the value)."""
    name = settings.executor
    if name == "multiprocess":
        return dg.multiprocess_executor
    if name == "in_process":
        return dg.in_process_executor
    if name == "celery":
        try:
            from dagster_celery import celery_executor
        except ImportError as exc:
            raise ImportError('FAIRNESS_EXECUTOR=celery needs dagster-celery: pip install -e ".[celery]"') from exc
        return celery_executor.configured(celery_config(settings))
    try:
        from dagster_k8s import k8s_job_executor
    except ImportError as exc:
        raise ImportError('FAIRNESS_EXECUTOR=k8s needs dagster-k8s: pip install -e ".[k8s]"') from exc
    return k8s_job_executor
