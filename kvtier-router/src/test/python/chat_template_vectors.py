"""Renders the chat templates under kvtier-router/src/test/resources/chat with Jinja2 set up as Hugging Face's
transformers sets it up for apply_chat_template (and so as vLLM renders a chat request): a sandboxed environment with
trim_blocks and lstrip_blocks, the loop-controls extension, a tojson filter that is json.dumps (no HTML escaping,
non-ASCII kept), and the raise_exception and strftime_now globals; special tokens and the request's extra keyword
arguments passed as variables. Writes each case's request and the text Jinja2 rendered (or the error it raised) to
cases.json, which ChatTemplateTest renders with kvtier's template engine and compares byte for byte.
Run: python3 kvtier-router/src/test/python/chat_template_vectors.py kvtier-router/src/test/resources/chat
(tested with Jinja2 3.1.6).
"""
import json
import os
import sys
from datetime import datetime

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

SPECIALS = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>"}


class TemplateError(Exception):
    pass


def environment():
    def raise_exception(message):
        raise TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt):
        return datetime.now().strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


SYSTEM = {"role": "system", "content": "  You are a helpful assistant.\n"}
USER = {"role": "user", "content": "Where is my prefix cached?"}
ASSISTANT = {"role": "assistant", "content": "In kvtier, on SSD."}
USER2 = {"role": "user", "content": "Ünïcödé 🚀 \"quoted\" and a tab\tand <html> & more"}
THINKING = {"role": "assistant", "content": "<think>\nFirst, look it up.\n</think>\n\nOn node 3."}
TOOL_CALL = {"role": "assistant", "content": "", "tool_calls": [
    {"type": "function", "function": {"name": "lookup", "arguments": {"prompt": "abc", "top_k": 3, "exact": True,
                                                                        "ratio": 0.5, "none": None}}}]}
TOOL_RESULT = {"role": "user", "content": "<tool_response>\n{\"node\": 3}\n</tool_response>"}
TOOLS = [{"type": "function", "function": {"name": "lookup", "description": "Finds where a prefix is cached.",
                                           "parameters": {"type": "object", "properties": {
                                               "prompt": {"type": "string"}, "top_k": {"type": "integer"}},
                                                          "required": ["prompt"]}}}]
DATE = {"date_string": "25 Nov 2026"}

CASES = [
    ("header-style.jinja", {"messages": [SYSTEM, USER]}),
    ("header-style.jinja", {"messages": [USER, ASSISTANT, USER2]}),
    ("header-style.jinja", {"messages": [SYSTEM, USER, ASSISTANT], "add_generation_prompt": False}),
    ("header-style.jinja", {"messages": [SYSTEM, USER2], "tools": TOOLS}),
    ("header-style.jinja", {"messages": [{"role": "critic", "content": "no"}]}),
    ("im-style.jinja", {"messages": [SYSTEM, USER]}),
    ("im-style.jinja", {"messages": [SYSTEM, USER, THINKING, USER2]}),
    ("im-style.jinja", {"messages": [USER, TOOL_CALL, TOOL_RESULT]}),
    ("im-style.jinja", {"messages": [USER, THINKING], "add_generation_prompt": False}),
    ("im-style.jinja", {"messages": [USER], "chat_template_kwargs": {"enable_thinking": False}}),
    ("inst-style.jinja", {"messages": [USER, ASSISTANT, USER2]}),
    ("inst-style.jinja", {"messages": [USER, USER2]}),
]


def render(env, source, request):
    variables = dict(SPECIALS)
    variables.update(DATE)
    variables.update(request.get("chat_template_kwargs", {}))
    return env.from_string(source).render(messages=request["messages"], tools=request.get("tools"),
                                          add_generation_prompt=request.get("add_generation_prompt", True),
                                          **variables)


def main(out):
    env = environment()
    cases = []
    for name, request in CASES:
        with open(os.path.join(out, name), encoding="utf-8") as f:
            source = f.read()
        case = {"template": name, "request": request}
        try:
            case["rendered"] = render(env, source, request)
        except TemplateError as e:
            case["error"] = str(e)
        cases.append(case)
    doc = {"jinja2": jinja2.__version__, "specials": SPECIALS, "variables": DATE, "cases": cases}
    with open(os.path.join(out, "cases.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
