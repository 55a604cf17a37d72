#!/usr/bin/env python3
"""The oracle for JinjaChatTemplateOracleTest: renders every chat template for every conversation
the way Hugging Face transformers' apply_chat_template does (chat_template_utils.py:
_compile_jinja_template and render_jinja_template), with Python's own jinja2 and no transformers.

Usage: render_chat_templates.py TEMPLATE_DIR CONVERSATIONS_JSON NOW_ISO
Prints {"<template file>": {"<conversation name>": {"text": ...} | {"error": ...}}} as JSON.
NOW_ISO fixes strftime_now's clock so Java and Python see the same date.
"""
import json
import os
import sys
from datetime import datetime

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "


def compile_template(source, now):
    # As HF: sandboxed, trim_blocks, lstrip_blocks, loopcontrols; tojson without HTML escaping.
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return now.strftime(format)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env.from_string(source)


def render(template, source, conv, special):
    messages = json.loads(json.dumps(conv["messages"]))
    cont = conv.get("continue_final_message", False)
    final = None
    if cont:
        # HF's newer marker approach: tag the final message, render, cut at the tag.
        final = messages[-1]["content"]
        messages[-1]["content"] = final + CONTINUE_TAG
    kwargs = dict(special)
    kwargs.update(conv.get("chat_template_kwargs", {}))
    text = template.render(
        messages=messages,
        tools=conv.get("tools"),
        documents=None,
        add_generation_prompt=conv.get("add_generation_prompt", True),
        **kwargs,
    )
    if cont:
        if final.strip() not in text or CONTINUE_TAG.strip() not in text:
            raise ValueError("continue_final_message is set but the final message does not appear in the chat")
        loc = text.rindex(CONTINUE_TAG.strip())
        if text[loc : loc + len(CONTINUE_TAG)] == CONTINUE_TAG:
            text = text[:loc]
        else:
            text = text[:loc].rstrip()
    return text


def main():
    template_dir, conversations_path, now_iso = sys.argv[1], sys.argv[2], sys.argv[3]
    now = datetime.fromisoformat(now_iso)
    with open(conversations_path, encoding="utf-8") as f:
        conversations = json.load(f)["conversations"]
    with open(os.path.join(template_dir, "special-tokens.json"), encoding="utf-8") as f:
        specials = json.load(f)
    out = {}
    for name in sorted(specials):
        with open(os.path.join(template_dir, name), encoding="utf-8", newline="") as f:
            source = f.read()
        template = compile_template(source, now)
        results = {}
        for conv in conversations:
            try:
                results[conv["name"]] = {"text": render(template, source, conv, specials[name])}
            except Exception as e:  # the Java side must fail too; raise_exception's message must match
                results[conv["name"]] = {"error": str(e), "type": type(e).__name__}
        out[name] = results
    json.dump(out, sys.stdout, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
