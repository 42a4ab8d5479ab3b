"""The one HTTP client: connections, retries, rate limits and timeouts for every remote call rewardsmith makes.

Judges, generation in evaluation jobs and the Fireworks integration all send
their requests through this package:

* :class:`~rewardsmith.http.transport.HTTPSender`: one keep-alive connection
  with fixed headers (proxy and CA bundle from the environment);
* :func:`~rewardsmith.http.retry.send_with_retries` and
  :class:`~rewardsmith.http.retry.RetryPolicy`: what is retried, how long to
  wait, ``Retry-After``;
* :func:`~rewardsmith.http.chat.post_chat`: one OpenAI-compatible chat
  completion request;
* :class:`~rewardsmith.http.ratelimit.RateLimiter`: evenly spaced requests
  per minute, across threads and event loops;
* :mod:`rewardsmith.http.testing`: local servers on 127.0.0.1 for tests
  (:class:`~rewardsmith.http.testing.LocalChatServer` for judges).

Importing it is cheap: ``httpx`` is imported when the first request is made.

>>> from rewardsmith.http import RetryPolicy
>>> RetryPolicy(max_retries=2).max_retries
2
"""

from rewardsmith.http.chat import ChatAnswer, post_chat
from rewardsmith.http.ratelimit import RateLimiter
from rewardsmith.http.retry import EndpointRequestError, RetryPolicy, parse_retry_after, redact, send_with_retries
from rewardsmith.http.transport import HTTPSender, proxy_for, shared_ssl_context

__all__ = [
    "ChatAnswer",
    "EndpointRequestError",
    "HTTPSender",
    "RateLimiter",
    "RetryPolicy",
    "parse_retry_after",
    "post_chat",
    "proxy_for",
    "redact",
    "send_with_retries",
    "shared_ssl_context",
]
