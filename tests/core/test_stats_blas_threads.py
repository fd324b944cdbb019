"""stats.blas_single_thread: the resampling products run on one BLAS thread (threadpoolctl), the
previous count comes back afterwards (also after an exception), nested blocks restore once,
blocks of concurrent threads take turns, and the statistics do not depend on the caller's count."""

import contextlib
import threading

import numpy as np
import pandas as pd
import pytest
from threadpoolctl import OpenBLASController, ThreadpoolController

from fairness_assets.core.statistics import stats
from fairness_assets.core.statistics.inference import InferenceParams

pytestmark = pytest.mark.skipif(
    not ThreadpoolController().select(user_api="blas").lib_controllers,
    reason="threadpoolctl finds no BLAS library in this process",
)


def _threads() -> set[int]:
    return {lib["num_threads"] for lib in ThreadpoolController().select(user_api="blas").info()}


@contextlib.contextmanager
def _blas_threads(n: int):
    """The process's BLAS on ``n`` threads, with no thread left holding threadpoolctl's control of
    OpenBLAS (a worker thread may set it), then the count it had."""
    limiter = ThreadpoolController().select(user_api="blas").limit(limits=n, user_api="blas")
    OpenBLASController.clear_controlling_thread()
    try:
        assert _threads() == {n}
        yield
    finally:
        limiter.restore_original_limits()
        OpenBLASController.clear_controlling_thread()


def test_one_thread_inside_and_the_previous_count_after():
    for n in (3, 2):
        with _blas_threads(n):
            with stats.blas_single_thread():
                assert _threads() == {1}
            assert _threads() == {n}
    with _blas_threads(2):
        with pytest.raises(RuntimeError, match="inside"):
            with stats.blas_single_thread():
                raise RuntimeError("inside")
        assert _threads() == {2}


def test_nested_blocks_restore_once_at_the_outermost():
    with _blas_threads(2):
        with stats.blas_single_thread():
            with stats.blas_single_thread():
                assert _threads() == {1}
            assert _threads() == {1}  # the inner block left the outer one's limit in place
        assert _threads() == {2}


def test_concurrent_blocks_take_turns_each_on_one_thread():
    """OpenBLAS's thread count is process-wide: a second thread's block waits for the first to
    leave (it never gives the first its threads back under it), then runs on one thread too."""
    a_inside, a_may_leave, b_inside = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def a():
        with stats.blas_single_thread():
            a_inside.set()
            a_may_leave.wait(10)
            seen["a, b waiting"] = _threads()

    def b():
        a_inside.wait(10)
        with stats.blas_single_thread():
            b_inside.set()
            seen["b"] = _threads()

    with _blas_threads(2):
        ta, tb = threading.Thread(target=a), threading.Thread(target=b)
        ta.start()
        tb.start()
        assert a_inside.wait(10)
        assert not b_inside.wait(0.3)  # b waits while a is inside
        a_may_leave.set()
        ta.join(10)
        tb.join(10)
        assert b_inside.is_set() and seen == {"a, b waiting": {1}, "b": {1}}
        assert _threads() == {2}


def test_the_statistics_do_not_depend_on_the_callers_blas_threads():
    rng = np.random.default_rng(3)
    responses = pd.DataFrame(
        [
            {
                "response_id": f"r{p}-{r}",
                "model": "m",
                "template": "base",
                "profile_id": f"p{p}",
                "gender": ("female", "male")[p % 2],
                "economic_class": ("low", "high")[(p // 2) % 2],
                "nationality": ("Kenyan", "French", "Brazilian")[p % 3],
                "run": r,
                "n_items": 3,
                "acc": rng.random(),
                "rep": rng.random(),
                "acad": np.nan,
                "drs": rng.random(),
            }
            for p in range(24)
            for r in range(3)
        ]
    )
    out = {}
    for n in (1, 2):
        with _blas_threads(n):
            out[n] = (
                stats.run_variability(responses, inference=InferenceParams(n_boot=200)),
                stats.counterfactual_disparity(responses, inference=InferenceParams(n_boot=200, n_perm=200)),
            )
    assert len(out[1][0]) and len(out[1][1])
    for one, two in zip(out[1], out[2], strict=False):
        pd.testing.assert_frame_equal(one, two, check_exact=True)
