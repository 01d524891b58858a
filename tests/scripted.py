"""A scripted model for engine tests: plays back actions, one per step."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from supportdesk.engine.protocol import Answer, StepRequest, TextDelta

Step = object  # an Action, or a callable StepRequest -> Action


@dataclass
class ScriptedModel:
    script: list[Step]
    name: str = "scripted"
    requests: list[StepRequest] = field(default_factory=list)
    delay: float = 0.0

    async def stream(self, request: StepRequest) -> AsyncIterator[object]:
        self.requests.append(request)
        if self.delay:
            await asyncio.sleep(self.delay)
        step = self.script.pop(0) if self.script else Answer("(script ran out)")
        action = step(request) if isinstance(step, Callable) else step  # type: ignore[arg-type]
        if isinstance(action, Exception):
            raise action
        if isinstance(action, Answer):
            for word in action.text.split(" "):
                yield TextDelta(word + " ")
        yield action

    async def aclose(self) -> None:
        pass
