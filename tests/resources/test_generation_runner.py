"""The generation engine's loop (resources/llm/runner.py) without Dagster: a fake client, a list as
the database, a clock the test moves."""

from __future__ import annotations

import pytest

from resources.llm.base import LLMClient, Sample, SamplingParams, TextsFromSamples
from resources.llm.runner import GenerationRunner, GenerationStats, IncompleteGenerationError


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class FakeClient(TextsFromSamples):
    """Answers ``answer <seed>``, 4 prompt and 2 output tokens each; ``chunks``: how many samples each
    yield holds; ``tick``: seconds the clock moves per yield; ``stop_after``: samples handed back
    before the stream ends (short) or, with ``fail``, before it raises."""

    name, backend, model_source, model_revision = "fake", "fake", "fake-source", "rev-1"

    def __init__(
        self,
        clock: Clock,
        *,
        streams: bool,
        chunk: int = 1,
        tick: float = 0.0,
        stop_after: int | None = None,
        fail: bool = False,
    ):
        self.streams_requests, self.clock, self.chunk, self.tick = streams, clock, chunk, tick
        self.stop_after, self.fail, self.asked = stop_after, fail, None

    def generate_samples(self, prompts, seeds, params):
        return [Sample(f"answer {s}", 4, 2, 0.5) for s in seeds]

    def stream_samples(self, prompts, seeds, params, labels=None):
        self.asked = (list(prompts), list(seeds), labels)
        limit = len(prompts) if self.stop_after is None else self.stop_after
        for start in range(0, limit, self.chunk):
            self.clock.now += self.tick
            yield [(i, Sample(f"answer {seeds[i]}", 4, 2, 0.5)) for i in range(start, min(start + self.chunk, limit))]
        if self.fail:
            raise RuntimeError(f"the server went away after {limit} samples")


def _runner(client, clock, database, events, **kwargs):
    def commit(finished):
        events.append(("commit", len(finished)))
        database.extend(finished)

    return GenerationRunner(
        client,
        commit,
        label="m|base",
        renew=lambda: events.append(("renew",)),
        log=lambda line: events.append(("log", line)),
        clock=clock,
        **kwargs,
    )


def test_the_clients_declare_what_the_engine_uses():
    from resources.llm.openai_backend import OpenAIClient

    assert isinstance(FakeClient(Clock(), streams=False), LLMClient)
    assert isinstance(OpenAIClient("http://127.0.0.1:9/v1", "m"), LLMClient)
    assert OpenAIClient.streams_requests is True and TextsFromSamples.streams_requests is False
    assert {"name", "backend", "model_source", "model_revision", "streams_requests"} <= set(LLMClient.__annotations__)
    assert callable(LLMClient.stream_samples) and callable(LLMClient.generate_samples)


def test_whole_batches_are_committed_batch_by_batch_and_the_lease_renewed_after_each():
    clock, database, events = Clock(), [], []
    client = FakeClient(clock, streams=False, chunk=3, tick=1.0)
    stats = _runner(client, clock, database, events).run(
        [f"q{i}" for i in range(7)], list(range(7)), SamplingParams(), labels=[f"r{i}" for i in range(7)]
    )
    commits = [e for e in events if e[0] != "log"]
    assert commits == [("commit", 3), ("renew",), ("commit", 3), ("renew",), ("commit", 1), ("renew",)]
    assert [i for i, _ in database] == list(range(7)) and database[6][1].text == "answer 6"
    assert client.asked[2] == [f"r{i}" for i in range(7)]  # the labels reach the client (its errors name samples)
    assert stats == GenerationStats(
        samples=7, prompt_tokens=28, output_tokens=14, request_s=3.5, wall_s=3.0, compute_kind="cpu", devices=1
    )
    logs = [e[1] for e in events if e[0] == "log"]
    # a progress line when the last sample is committed (the first commits came sooner than 5 s), then the total
    assert logs[0].startswith("generations progress: m|base: 7/7 samples (100%), ")
    assert logs[-1].startswith("m|base: 7/7 samples (100%), 4.7 output tokens/s")


def test_a_stream_is_committed_every_n_samples_or_every_two_seconds():
    clock, database, events = Clock(), [], []
    client = FakeClient(clock, streams=True, chunk=1, tick=0.1)
    _runner(client, clock, database, events, commit_every=4).run(["q"] * 10, list(range(10)), SamplingParams())
    assert [e[1] for e in events if e[0] == "commit"] == [4, 4, 2]  # the last two when the stream ends
    clock, database, events = Clock(), [], []
    client = FakeClient(clock, streams=True, chunk=1, tick=0.9)  # slow answers: 2 s pass before 64 wait
    _runner(client, clock, database, events).run(["q"] * 7, list(range(7)), SamplingParams())
    assert [e[1] for e in events if e[0] == "commit"] == [3, 3, 1]
    assert len(database) == 7 and len({i for i, _ in database}) == 7  # nothing committed twice


def test_progress_lines_come_at_most_every_five_seconds():
    clock, database, events = Clock(), [], []
    client = FakeClient(clock, streams=False, chunk=1, tick=2.0)
    _runner(client, clock, database, events).run(["q"] * 8, list(range(8)), SamplingParams())
    progress = [e[1] for e in events if e[0] == "log" and e[1].startswith("generations progress: ")]
    assert [line.split(": ")[2].split(" ")[0] for line in progress] == ["3/8", "6/8", "8/8"]


def test_a_failing_stream_keeps_what_finished_and_raises():
    clock, database, events = Clock(), [], []
    client = FakeClient(clock, streams=True, chunk=2, stop_after=5, fail=True)
    with pytest.raises(RuntimeError, match="went away after 5 samples"):
        _runner(client, clock, database, events).run(["q"] * 9, list(range(9)), SamplingParams())
    assert sorted(i for i, _ in database) == [0, 1, 2, 3, 4]  # committed before the failure propagated


def test_a_short_stream_fails_naming_how_many_are_missing_and_keeps_the_rest():
    clock, database, events = Clock(), [], []
    client = FakeClient(clock, streams=False, chunk=2, stop_after=4)
    with pytest.raises(
        IncompleteGenerationError,
        match=r"partition m\|base: the fake backend returned 4 of 6 "
        r"samples \(2 missing\); the 4 are stored",
    ):
        _runner(client, clock, database, events).run(["q"] * 6, list(range(6)), SamplingParams())
    assert [i for i, _ in database] == [0, 1, 2, 3]


def test_a_commit_that_fails_stops_the_run_and_renewal_failures_never_commit_twice():
    clock = Clock()
    stored = []

    def refuse(finished):
        raise PermissionError("lease lost to run other-run")

    runner = GenerationRunner(FakeClient(clock, streams=False, chunk=2), refuse, label="m|base", clock=clock)
    with pytest.raises(PermissionError, match="lease lost"):
        runner.run(["q"] * 4, list(range(4)), SamplingParams())

    def renew():
        raise ConnectionError("database gone while renewing")

    runner = GenerationRunner(
        FakeClient(clock, streams=False, chunk=2), stored.extend, label="m|base", renew=renew, clock=clock
    )
    with pytest.raises(ConnectionError):
        runner.run(["q"] * 4, list(range(4)), SamplingParams())
    assert [i for i, _ in stored] == [0, 1]  # the committed batch is not committed again on the way out


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="commit_every"):
        GenerationRunner(FakeClient(Clock(), streams=False), list.append, label="k", commit_every=-1)
    runner = GenerationRunner(FakeClient(Clock(), streams=False), list.append, label="m|base")
    with pytest.raises(ValueError, match=r"m\|base: 3 prompts but 2 seeds"):
        runner.run(["a", "b", "c"], [1, 2], SamplingParams())


def test_endpoint_cost_is_request_seconds():
    stats = GenerationStats(
        samples=2, prompt_tokens=8, output_tokens=4, request_s=1.25, wall_s=0.5, compute_kind="endpoint", devices=0
    )
    assert stats.compute_s == 1.25 and stats.output_tokens_per_s == 8.0
    gpu = GenerationStats(
        samples=2, prompt_tokens=8, output_tokens=4, request_s=1.25, wall_s=0.5, compute_kind="gpu", devices=2
    )
    assert gpu.compute_s == 1.0
