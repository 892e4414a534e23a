"""Thin adapters from a ``Session`` to the tool-calling formats agent frameworks use.

Each submodule imports its framework only when used: ``openai`` and ``anthropic`` need no SDK at all
(they build and read plain dicts); ``pydantic_ai`` and ``langchain`` import those frameworks. Every
adapter passes the model's arguments to fs-tools unvalidated by the framework, so the model gets our
codes and teaching messages, never a framework's generic validation error.
"""
