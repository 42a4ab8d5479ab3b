"""Fireworks datasets: push a dataset as Fireworks evaluation JSONL, and read one back as ``fireworks:ACCOUNT/ID``.

>>> from rewardsmith.integrations.fireworks import push_dataset, fetch_dataset, FireworksClient
>>> FireworksClient(api_key="fw-...", base_url="https://api.fireworks.ai")
FireworksClient(base_url='https://api.fireworks.ai')

Importing this package registers the ``fireworks:`` dataset source scheme.
"""

from rewardsmith.data.loading import register_source_scheme
from rewardsmith.integrations.fireworks.datasets import PushResult, fetch_dataset, push_dataset, write_fireworks_jsonl
from rewardsmith.integrations.fireworks.rest import FireworksClient, FireworksError

__all__ = ["FireworksClient", "FireworksError", "PushResult", "fetch_dataset", "push_dataset", "write_fireworks_jsonl"]

register_source_scheme("fireworks", lambda spec: str(fetch_dataset(spec)))
