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
    # If set, an answer streams its first word, then waits for this before the rest (tests of a draft).
    mid_stream: asyncio.Event | None = None

    async def stream(self, request: StepRequest) -> AsyncIterator[object]:
        self.requests.append(request)
        if self.delay:
            await asyncio.sleep(self.delay)
        step = self.script.pop(0) if self.script else Answer("(script ran out)")
        action = step(request) if isinstance(step, Callable) else step  # type: ignore[arg-type]
        if isinstance(action, Exception):
            raise action
        if isinstance(action, Answer):
            for n, word in enumerate(action.text.split(" ")):
                if n == 1 and self.mid_stream is not None:
                    await self.mid_stream.wait()
                yield TextDelta(word + " ")
        yield action

    async def aclose(self) -> None:
        pass
