"""Semantic Kernel (``semantic-kernel`` 1.x): the workspace's tools as a ``KernelPlugin`` of
``KernelFunction`` objects, and ``WorkspaceKernel``, a ``Kernel`` that hands them the model's arguments
as it wrote them, for ``FunctionChoiceBehavior.Auto()`` with any chat completion service, and for
``ChatCompletionAgent``.

    kernel = WorkspaceKernel(plugins=[plugin(session)])                  # tools named fs-read, fs-edit...
    agent = ChatCompletionAgent(service=service, kernel=kernel, instructions="You edit code.")
    response = await agent.get_response(messages="rename greet to welcome in src/app.py")

Validation: ``Kernel.invoke_function_call`` checks every call against the function's parameters before
it runs (a missing required argument, an unknown key, arguments that are not a JSON object) and
answers the model with its own message; a ``KernelFunctionFromMethod`` then converts each value to its
annotated type. ``WorkspaceKernel`` passes a call to one of our functions on as a single hidden argument
(``RAW_ARGUMENTS``) holding the model's arguments as it wrote them, which our functions declare to the
kernel, so a wrong type, an invented key or broken JSON reaches ``session.acall`` unchanged and comes
back as our INVALID_ARGS message; every other function is called as the kernel calls it. On a plain
``Kernel`` our functions still work, but the kernel then answers an unknown key itself.

Schema: Semantic Kernel builds what the model sees from each parameter's ``schema_data``: each of ours
is the published property schema, whole, and the required ones are listed. Its connectors build the
object around them (``type``, ``properties``, ``required``) and drop ``additionalProperties``; fs-tools
still refuses an unknown argument. A tool's name is the plugin's before its own: ``fs-read``.

Errors: Semantic Kernel has no error flag for a function result (a function that raises is answered
with its own ``An error occurred while invoking the function ...``); a failure is returned as the text
``ERROR <code>: <message>``, and ``is_error`` and ``error_code`` in the result's metadata, which the
``FunctionResultContent`` in the chat history carries, tell the host.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from pydantic import PrivateAttr
from semantic_kernel import Kernel
from semantic_kernel.contents import ChatHistory, FunctionCallContent
from semantic_kernel.exceptions import KernelFunctionNotFoundError, KernelPluginNotFoundError
from semantic_kernel.functions import (
    FunctionResult,
    KernelArguments,
    KernelFunction,
    KernelFunctionMetadata,
    KernelParameterMetadata,
    KernelPlugin,
)

from fs_tools.adapters import render
from fs_tools.workspace import Session

if TYPE_CHECKING:
    from semantic_kernel.filters.auto_function_invocation.auto_function_invocation_context import (
        AutoFunctionInvocationContext,
    )
    from semantic_kernel.filters.functions.function_invocation_context import FunctionInvocationContext

RAW_ARGUMENTS = "fs_tools_arguments"
"""The hidden argument that carries the model's arguments, as it wrote them, to a ``WorkspaceFunction``."""


class WorkspaceFunction(KernelFunction):
    """One fs-tools tool bound to a session."""

    tool: str
    _session: Session = PrivateAttr()  # shared, never copied, when Semantic Kernel copies the function

    def __init__(self, session: Session, schema: dict[str, Any]) -> None:
        published = schema["input_schema"]
        required = set(published.get("required", []))
        parameters = [
            KernelParameterMetadata(
                name=name,
                description=prop.get("description"),
                type=prop["type"] if isinstance(prop.get("type"), str) else None,
                is_required=name in required,
                schema_data=copy.deepcopy(prop),
            )
            for name, prop in published.get("properties", {}).items()
        ]
        metadata = KernelFunctionMetadata(
            name=schema["name"],
            description=schema["description"],
            parameters=parameters,
            is_prompt=False,
            is_asynchronous=True,
            return_parameter=KernelParameterMetadata(name="return", type="str", schema_data={"type": "string"}),
        )
        super().__init__(metadata=metadata, tool=schema["name"])
        self._session = session

    @property
    def parameters(self) -> list[KernelParameterMetadata]:
        """What the kernel checks a call against (the model is shown ``metadata.parameters``): the
        published arguments, none required, and the hidden one ``WorkspaceKernel`` passes."""
        accepted = [parameter.model_copy(update={"is_required": False}) for parameter in self.metadata.parameters]
        hidden = KernelParameterMetadata(
            name=RAW_ARGUMENTS, is_required=False, include_in_function_choices=False, schema_data={}
        )
        return [*accepted, hidden]

    async def _invoke_internal(self, context: FunctionInvocationContext) -> None:
        result = await self._session.acall(self.tool, self._raw(context.arguments))
        value = render(result)
        metadata: dict[str, Any] = {"is_error": result.is_error}
        if result.error is not None:
            metadata["error_code"] = result.error.code
        context.result = FunctionResult(function=self.metadata, value=value, metadata=metadata)

    async def _invoke_internal_stream(self, context: FunctionInvocationContext) -> None:
        await self._invoke_internal(context)

    def _raw(self, arguments: KernelArguments) -> Any:
        """The model's arguments: as it wrote them (through ``WorkspaceKernel``), or, called some other way,
        those of the kernel's arguments that are ours."""
        if RAW_ARGUMENTS in arguments:
            raw = arguments[RAW_ARGUMENTS]
            return {} if raw is None or raw == "" else raw
        names = {parameter.name for parameter in self.metadata.parameters}
        return {key: value for key, value in arguments.items() if key in names}


class WorkspaceKernel(Kernel):
    """A ``Kernel`` whose ``WorkspaceFunction`` calls get the model's arguments unvalidated by the kernel."""

    async def invoke_function_call(
        self, function_call: FunctionCallContent, chat_history: ChatHistory, *args: Any, **kwargs: Any
    ) -> AutoFunctionInvocationContext | None:
        if isinstance(self._target(function_call), WorkspaceFunction):
            # one hidden argument holding what the model wrote; the history keeps the original call
            function_call = function_call.model_copy(update={"arguments": {RAW_ARGUMENTS: function_call.arguments}})
        return await super().invoke_function_call(function_call, chat_history, *args, **kwargs)

    def clone(self) -> WorkspaceKernel:
        """``Kernel.clone`` (the handoff orchestration clones each agent's kernel) returns a plain
        ``Kernel``; this one stays a ``WorkspaceKernel``."""
        cloned = super().clone()
        return WorkspaceKernel(
            plugins=cloned.plugins,
            services=cloned.services,
            ai_service_selector=cloned.ai_service_selector,
            function_invocation_filters=cloned.function_invocation_filters,
            prompt_rendering_filters=cloned.prompt_rendering_filters,
            auto_function_invocation_filters=cloned.auto_function_invocation_filters,
        )

    def _target(self, function_call: FunctionCallContent) -> KernelFunction | None:
        if not function_call.function_name:
            return None
        try:
            return self.get_function(function_call.plugin_name, function_call.function_name)
        except (KernelFunctionNotFoundError, KernelPluginNotFoundError):  # not the kernel's: it answers that itself
            return None


def plugin(session: Session, name: str = "fs") -> KernelPlugin:
    """A plugin named ``name`` with one ``WorkspaceFunction`` per tool of the workspace, bound to
    ``session``; the model sees each tool as ``<name>-<tool>``. Add it to a ``WorkspaceKernel``."""
    return KernelPlugin(
        name=name, functions=[WorkspaceFunction(session, schema) for schema in session.workspace.tool_schemas()]
    )


def kernel(session: Session, name: str = "fs") -> WorkspaceKernel:
    """A ``WorkspaceKernel`` with the workspace's plugin (add a chat completion service, or give it to an
    agent)."""
    return WorkspaceKernel(plugins=[plugin(session, name)])
