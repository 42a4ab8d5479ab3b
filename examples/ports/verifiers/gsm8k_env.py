"""A GSM8K task in the style of a verifiers (0.4, ``verifiers.v1``) environment: its data type, rewards and metric.

Written for rewardsmith (no verifiers code copied). The task's rewards read the
rollout's last reply and the row's ``answer``; verifiers weighs them.
"""

from __future__ import annotations

import re

import verifiers.v1 as vf


class MathData(vf.TaskData):
    answer: str


class GSM8KTask(vf.Task[MathData]):
    @vf.reward(weight=1.0)
    async def correct_answer(self, trace: vf.Trace) -> float:
        said = re.findall(r"-?\d[\d,]*(?:\.\d+)?", trace.last_reply.rsplit("</think>", 1)[-1])
        return 1.0 if said and said[-1].replace(",", "") == self.data.answer.replace(",", "") else 0.0

    @vf.reward(weight=0.2)
    async def boxed_format(self, trace: vf.Trace) -> float:
        return 1.0 if "\\boxed{" in trace.last_reply else 0.0

    @vf.metric
    async def reply_chars(self, trace: vf.Trace) -> float:
        return float(len(trace.last_reply))
