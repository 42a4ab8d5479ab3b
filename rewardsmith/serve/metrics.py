"""``GET /metrics``: the reward server's counters in Prometheus' text format (version 0.0.4).

What a cluster watches, every series prefixed ``rewardsmith_serve_``:

* ``requests_total{endpoint, status}``: requests answered;
* ``request_seconds{endpoint}``: a histogram of the time to answer;
* ``samples_total{endpoint}``: samples scored;
* ``failures_total{kind}``: requests refused or failed, by kind (``bad_request``, ``unauthorized``,
  ``timeout``, ``too_large``, ``busy``, ``internal``);
* ``reward_samples_total{reward}``, ``reward_errors_total{reward}``, ``reward_seconds{reward}`` (a
  histogram of the time each batch took that reward);
* ``in_flight`` and ``queue_depth``: batches being scored, and waiting their turn.

Written here, with no client library: the format is a few lines of text.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable

__all__ = ["BUCKETS", "ServerMetrics"]

#: Histogram bounds in seconds.
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)

#: Failure kinds by HTTP status.
_KINDS = {400: "bad_request", 401: "unauthorized", 408: "timeout", 413: "too_large", 503: "busy", 500: "internal"}


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(**labels: str) -> str:
    return "{" + ",".join(f'{k}="{_escape(str(v))}"' for k, v in labels.items()) + "}" if labels else ""


def _number(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


class _Histogram:
    def __init__(self) -> None:
        self.counts = [0] * len(BUCKETS)
        self.total = 0
        self.sum = 0.0

    def observe(self, seconds: float) -> None:
        self.total += 1
        self.sum += seconds
        for i, bound in enumerate(BUCKETS):
            if seconds <= bound:
                self.counts[i] += 1

    def lines(self, name: str, **labels: str) -> list[str]:
        out = [f"{name}_bucket{_labels(**labels, le=_number(b))} {c}" for b, c in zip(BUCKETS, self.counts)]
        out.append(f"{name}_bucket{_labels(**labels, le='+Inf')} {self.total}")
        out.append(f"{name}_sum{_labels(**labels)} {_number(self.sum)}")
        out.append(f"{name}_count{_labels(**labels)} {self.total}")
        return out


class ServerMetrics:
    """The counters of one server (updated on its event loop); :meth:`render` writes them.

    >>> m = ServerMetrics(lambda: (1, 0))
    >>> m.request("/score", 200, 0.02, samples=3)
    >>> m.reward("gsm8k_accuracy", samples=3, errors=0, seconds=0.01)
    >>> text = m.render()
    >>> 'rewardsmith_serve_requests_total{endpoint="/score",status="200"} 1' in text
    True
    >>> "rewardsmith_serve_in_flight 1" in text
    True
    """

    def __init__(self, gauges: Callable[[], tuple[int, int]]) -> None:
        self.gauges = gauges
        self.requests: dict[tuple[str, int], int] = defaultdict(int)
        self.latency: dict[str, _Histogram] = defaultdict(_Histogram)
        self.samples: dict[str, int] = defaultdict(int)
        self.failures: dict[str, int] = defaultdict(int)
        self.reward_samples: dict[str, int] = defaultdict(int)
        self.reward_errors: dict[str, int] = defaultdict(int)
        self.reward_latency: dict[str, _Histogram] = defaultdict(_Histogram)

    def request(self, endpoint: str, status: int, seconds: float, samples: int = 0) -> None:
        """One request answered."""
        self.requests[(endpoint, status)] += 1
        self.latency[endpoint].observe(seconds)
        self.samples[endpoint] += samples
        if status >= 400:
            self.failures[_KINDS.get(status, "internal" if status >= 500 else "bad_request")] += 1

    def reward(self, name: str, samples: int, errors: int, seconds: float) -> None:
        """One batch scored by one reward."""
        self.reward_samples[name] += samples
        self.reward_errors[name] += errors
        self.reward_latency[name].observe(seconds)

    def render(self) -> str:
        """The metrics in Prometheus' text format."""
        p = "rewardsmith_serve_"
        lines: list[str] = []

        def family(name: str, kind: str, text: str) -> None:
            lines.extend([f"# HELP {p}{name} {text}", f"# TYPE {p}{name} {kind}"])

        family("requests_total", "counter", "Requests answered, by endpoint and HTTP status.")
        for (endpoint, status), count in sorted(self.requests.items()):
            lines.append(f"{p}requests_total{_labels(endpoint=endpoint, status=str(status))} {count}")
        family("request_seconds", "histogram", "Time to answer a request, by endpoint.")
        for endpoint, histogram in sorted(self.latency.items()):
            lines += histogram.lines(f"{p}request_seconds", endpoint=endpoint)
        counters = [
            ("samples_total", "Samples scored, by endpoint.", "endpoint", self.samples),
            ("failures_total", "Requests refused or failed, by kind.", "kind", self.failures),
            ("reward_samples_total", "Samples each reward scored.", "reward", self.reward_samples),
            ("reward_errors_total", "Samples each reward failed on (scored None).", "reward", self.reward_errors),
        ]
        for name, text, label, counts in counters:
            family(name, "counter", text)
            lines.extend(f"{p}{name}{_labels(**{label: key})} {count}" for key, count in sorted(counts.items()))
        family("reward_seconds", "histogram", "Time each reward took on a batch.")
        for name, histogram in sorted(self.reward_latency.items()):
            lines += histogram.lines(f"{p}reward_seconds", reward=name)
        in_flight, waiting = self.gauges()
        family("in_flight", "gauge", "Batches being scored now.")
        lines.append(f"{p}in_flight {in_flight}")
        family("queue_depth", "gauge", "Batches waiting for their turn to be scored.")
        lines.append(f"{p}queue_depth {waiting}")
        return "\n".join(lines) + "\n"
