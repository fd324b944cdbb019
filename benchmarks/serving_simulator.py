"""A loopback serving-engine simulator that speaks the OpenAI chat-completions API.

A real HTTP/1.1 server on 127.0.0.1 (asyncio streams, keep-alive) that behaves like a serving
engine such as vLLM or TGI, without a model:

- an aggregate decode budget of ``capacity_tps`` output tokens/s shared by the requests in
  flight (processor sharing), and a per-request ceiling of ``per_request_tps`` (one sequence
  cannot decode faster than one token per step): ``rate = min(per_request_tps, capacity_tps / n)``;
- a prefill delay per request (``prefill_s`` plus ``prompt_tokens / prefill_tps``);
- answers of realistic length: ``min_tokens..max_tokens`` words, drawn from the request's
  ``seed`` (the same request gives the same answer), written the way models answer the audit's
  prompt (a JSON list of three universities with programs and countries, then prose), so the
  parser and matcher downstream get real work;
- ``GET /v1/models`` lists the served model ids; unknown models get 404, like vLLM;
- optional faults: every ``fail_every``-th request answers 429 with ``Retry-After`` (or 503).

It counts what it served (``stats``): completion tokens, requests, the peak number in flight
and the busy time, so a benchmark reports achieved tokens/s as a fraction of ``capacity_tps``.

    with ServingSimulator(capacity_tps=12000, per_request_tps=80) as sim:
        client = AsyncOpenAI(base_url=sim.url, api_key="x")   # sim.url ends in /v1
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import time
from dataclasses import asdict, dataclass, field

UNIVERSITIES = [  # (name, program, country): names every QS export and the demo corpus hold
    ("Massachusetts Institute of Technology", "Master of Science in Computer Science", "United States"),
    ("University of Oxford", "MSc in Economics", "United Kingdom"),
    ("ETH Zurich", "Master in Data Science", "Switzerland"),
    ("University of Toronto", "Master of Public Health", "Canada"),
    ("National University of Singapore", "MSc in Business Analytics", "Singapore"),
    ("University of Melbourne", "Master of Engineering", "Australia"),
    ("University of Cape Town", "MPhil in Development Studies", "South Africa"),
    ("University of Tokyo", "Master of Engineering", "Japan"),
    ("Technical University of Munich", "MSc in Informatics", "Germany"),
    ("University of Lagos", "MSc in Computer Science", "Nigeria"),
    ("Stanford University", "MS in Statistics", "United States"),
    ("Imperial College London", "MSc in Artificial Intelligence", "United Kingdom"),
]
FILLER = (
    "These programmes combine strong research groups with good funding options and an active "
    "international student community that helps newcomers settle in quickly"
).split()


def answer_for(seed: int, n_tokens: int) -> str:
    """A model-like answer of ``n_tokens`` words (the simulator's token unit) for one seed."""
    h = int.from_bytes(hashlib.sha256(str(seed).encode()).digest()[:8], "big")
    picks = [UNIVERSITIES[(h >> (4 * i)) % len(UNIVERSITIES)] for i in range(3)]
    items = [{"university": u, "program": p, "country": c} for u, p, c in picks]
    head = json.dumps(items)
    words = head.split()
    filler = [FILLER[i % len(FILLER)] for i in range(max(0, n_tokens - len(words)))]
    return head + ("\n\n" + " ".join(filler) if filler else "")


@dataclass(eq=False)  # hashed by identity: jobs live in a set
class _Job:
    tokens: int
    done: float = 0.0
    event: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class SimulatorStats:
    requests: int = 0
    completion_tokens: int = 0
    rejected: int = 0
    peak_in_flight: int = 0
    first_request_at: float = 0.0
    last_answer_at: float = 0.0
    decoded_tokens: float = 0.0  # decoded so far (integrated by the clock)
    last_request_at: float = 0.0  # when the last request so far arrived
    decoded_at_last_request: float = 0.0  # decoded_tokens at that moment


class ServingSimulator:
    def __init__(
        self,
        capacity_tps: float = 12_000.0,
        per_request_tps: float = 80.0,
        prefill_s: float = 0.05,
        prefill_tps: float = 50_000.0,
        min_tokens: int = 120,
        max_tokens: int = 300,
        models: tuple[str, ...] = ("sim-model",),
        fail_every: int = 0,
        fail_status: int = 429,
        retry_after_s: float = 0.2,
        tick_s: float = 0.005,
        lengths: tuple[int, ...] = (),
    ):
        self.capacity_tps, self.per_request_tps = float(capacity_tps), float(per_request_tps)
        self.lengths = tuple(int(x) for x in lengths)  # answer lengths to draw from (by seed); else min..max
        self.prefill_s, self.prefill_tps = prefill_s, prefill_tps
        self.min_tokens, self.max_tokens = min_tokens, max_tokens
        self.models = tuple(models)
        self.fail_every, self.fail_status, self.retry_after_s = fail_every, fail_status, retry_after_s
        self.tick_s = tick_s
        self.stats = SimulatorStats()
        self._jobs: set[_Job] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server = None
        self._ready = threading.Event()
        self._seen = 0
        self.port = 0

    # ------------------------------------------------------------------ lifecycle
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "ServingSimulator":
        self._thread = threading.Thread(target=self._run, name="serving-simulator", daemon=True)
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("the serving simulator did not start")
        return self

    def stop(self) -> None:
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> "ServingSimulator":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def reset_stats(self) -> None:
        self.stats = SimulatorStats()

    def achieved_tps(self) -> float:
        s = self.stats
        span = s.last_answer_at - s.first_request_at
        return s.completion_tokens / span if span > 0 else 0.0

    def steady_tps(self) -> float:
        """Tokens/s decoded while the client still had requests to send (first request to last request):
        the drain at the end, when fewer requests than the engine could serve are left, is not the client's."""
        s = self.stats
        span = s.last_request_at - s.first_request_at
        return s.decoded_at_last_request / span if span > 0 else 0.0

    def _run(self) -> None:
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)

        async def main():
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=4096, limit=1 << 20)
            self.port = self._server.sockets[0].getsockname()[1]
            self._loop.create_task(self._clock())
            self._ready.set()

        self._loop.run_until_complete(main())
        try:
            self._loop.run_forever()
        finally:  # cancel the clock and the open connections, let them finish, then close
            self._server.close()
            tasks = asyncio.all_tasks(self._loop)
            for task in tasks:
                task.cancel()
            self._loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            self._loop.close()

    # ------------------------------------------------------------------ the engine
    async def _clock(self) -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(self.tick_s)
            now = time.perf_counter()
            dt, last = now - last, now
            if not self._jobs:
                continue
            rate = min(self.per_request_tps, self.capacity_tps / len(self._jobs))
            for job in list(self._jobs):
                self.stats.decoded_tokens += min(rate * dt, max(0.0, job.tokens - job.done))
                job.done += rate * dt
                if job.done >= job.tokens:
                    self._jobs.discard(job)
                    job.event.set()

    async def _decode(self, tokens: int, prompt_tokens: int) -> None:
        await asyncio.sleep(self.prefill_s + prompt_tokens / self.prefill_tps)
        job = _Job(tokens)
        self._jobs.add(job)
        self.stats.peak_in_flight = max(self.stats.peak_in_flight, len(self._jobs))
        await job.event.wait()

    # ------------------------------------------------------------------ HTTP
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request_line = await reader.readline()
                if not request_line:
                    break
                method, path, _ = request_line.decode("latin-1").split(" ", 2)
                headers = {}
                while True:
                    line = await reader.readline()
                    if line in (b"\r\n", b"\n", b""):
                        break
                    k, _, v = line.decode("latin-1").partition(":")
                    headers[k.strip().lower()] = v.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
                status, payload, extra = await self._handle(method, path, body)
                data = json.dumps(payload).encode()
                head = [
                    f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}",
                    "content-type: application/json",
                    f"content-length: {len(data)}",
                    *extra,
                ]
                writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + data)
                await writer.drain()
                if headers.get("connection", "").lower() == "close":
                    break
        except (ConnectionError, asyncio.IncompleteReadError, ValueError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def _handle(self, method: str, path: str, body: bytes):
        path = path.split("?", 1)[0].rstrip("/")
        if path == "/_sim/stats":  # the control endpoint of SimulatorProcess (not part of the OpenAI API)
            if method == "POST":
                self.reset_stats()
            return 200, {**asdict(self.stats), "achieved_tps": self.achieved_tps(), "steady_tps": self.steady_tps()}, []
        if method == "GET" and path.endswith("/models"):
            return 200, {"object": "list", "data": [{"id": m, "object": "model"} for m in self.models]}, []
        if method != "POST" or not path.endswith("/chat/completions"):
            return 404, {"error": {"message": f"no route {method} {path}"}}, []
        req = json.loads(body or b"{}")
        if req.get("model") not in self.models:
            return 404, {"error": {"message": f"The model `{req.get('model')}` does not exist."}}, []
        self._seen += 1
        if self.fail_every and self._seen % self.fail_every == 0:
            self.stats.rejected += 1
            return self.fail_status, {"error": {"message": "busy, retry later"}}, [f"retry-after: {self.retry_after_s}"]
        if not self.stats.first_request_at:
            self.stats.first_request_at = time.perf_counter()
        self.stats.last_request_at = time.perf_counter()
        self.stats.decoded_at_last_request = self.stats.decoded_tokens
        seed = int(req.get("seed") or 0)
        draw = int.from_bytes(hashlib.sha256(f"len{seed}".encode()).digest()[:4], "big")
        if self.lengths:
            tokens = self.lengths[draw % len(self.lengths)]
        else:
            tokens = self.min_tokens + draw % (self.max_tokens - self.min_tokens + 1)
        tokens = min(tokens, int(req.get("max_tokens") or req.get("max_completion_tokens") or tokens))
        prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in req.get("messages") or [])
        await self._decode(tokens, prompt_tokens)
        text = answer_for(seed, tokens)
        self.stats.requests += 1
        self.stats.completion_tokens += tokens
        self.stats.last_answer_at = time.perf_counter()
        return (
            200,
            {
                "id": f"chatcmpl-{seed}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": req["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": tokens,
                    "total_tokens": prompt_tokens + tokens,
                },
            },
            [],
        )


def _serve_forever(kwargs: dict, port_queue) -> None:
    sim = ServingSimulator(**kwargs).start()
    port_queue.put(sim.port)
    threading.Event().wait()  # until the parent terminates this process


class SimulatorProcess:
    """The simulator in a child process, as a real engine is: its event loop does not share the
    client's interpreter (GIL) and its CPU time is not the client's. Same interface as
    ``ServingSimulator`` for what the benchmarks read (``url``, ``stats``, ``achieved_tps``,
    ``reset_stats``); the statistics come from the child over ``/_sim/stats``."""

    def __init__(self, **kwargs):
        self.kwargs = kwargs
        self._proc = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _stats(self, method: str = "GET") -> dict:
        import urllib.request

        req = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/_sim/stats", method=method, data=b"" if method == "POST" else None
        )
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.loads(resp.read())

    @property
    def stats(self) -> SimulatorStats:
        d = self._stats()
        d.pop("achieved_tps")
        d.pop("steady_tps")
        return SimulatorStats(**d)

    def achieved_tps(self) -> float:
        return float(self._stats()["achieved_tps"])

    def steady_tps(self) -> float:
        return float(self._stats()["steady_tps"])

    def reset_stats(self) -> None:
        self._stats("POST")

    def __enter__(self) -> "SimulatorProcess":
        import multiprocessing as mp

        ctx = mp.get_context("spawn")
        q = ctx.Queue()
        self._proc = ctx.Process(target=_serve_forever, args=(self.kwargs, q), daemon=True, name="serving-simulator")
        self._proc.start()
        self.port = q.get(timeout=60)
        return self

    def __exit__(self, *exc) -> None:
        if self._proc is not None:
            self._proc.terminate()
            self._proc.join(10)
