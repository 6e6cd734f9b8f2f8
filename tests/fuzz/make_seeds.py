#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora under tests/fuzz/seeds/ (committed; re-run to refresh).

requests/     every JSON request body quoted in the unit tests' raw strings (tests/unit/api) and
              in the API cases (the `cases` folder, default ../shared/cases beside the repo);
              shared by the OpenAI, Responses, Anthropic and Ollama targets (a body of one API
              is a good start for another's parser)
config/       `serve --config` files
session_ids/  Last-Event-ID / ?after / starting_after values (fuzz_session_ids.cpp's format)
chat_output/  model outputs in the test templates' formats (fuzz_chat_output.cpp's format)
hub_listing/  hub `tree` listing pages and Link header values
disk_entry/   prefix-cache disk entries (cache/disk_store.h's file format), whole and damaged
journal/      small journal databases (the schema of src/journal/journal_store.cpp, 512-byte
              pages so a file fits the fuzzer's input size), whole and damaged

Usage: tests/fuzz/make_seeds.py [CASES_DIR]
"""
import hashlib
import json
import os
import pathlib
import re
import sqlite3
import struct
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests/fuzz/seeds"


def json_objects(text):
    """Every balanced {...} in text that parses as a non-empty JSON object."""
    found = []
    for start in (m.start() for m in re.finditer(r"\{", text)):
        depth, in_str, esc = 0, False, False
        for i in range(start, len(text)):
            c = text[i]
            if in_str:
                esc = not esc and c == "\\"
                if c == '"' and not esc:
                    in_str = False
                if c != "\\":
                    esc = False
                continue
            if c == '"':
                in_str = True
            elif c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    try:
                        obj = json.loads(text[start:i + 1])
                    except ValueError:
                        break
                    if isinstance(obj, dict) and obj:
                        found.append(text[start:i + 1])
                    break
    return found


def request_bodies(cases_dir):
    sources = sorted((ROOT / "tests/unit/api").glob("*_test.cpp"))
    if cases_dir.is_dir():
        sources += sorted(cases_dir.glob("*.md"))
    bodies = []
    for path in sources:
        text = path.read_text()
        if path.suffix == ".cpp":
            text = "\n".join(re.findall(r'R"\((.*?)\)"', text, re.S))
        # Top-level request bodies only: those naming messages, input, prompt or model.
        for body in json_objects(text):
            obj = json.loads(body)
            if {"messages", "input", "prompt", "model"} & obj.keys():
                bodies.append(body)
    return bodies


def deep_bodies():
    """Bodies nested as deep as the fuzzer's 16 KiB inputs allow (issue #38: every walk of client
    JSON depth-bounded): the fuzzer mutates from here rather than building depth one byte at a
    time. Where a body may nest (template kwargs, schemas, tool arguments, content), and plain
    arrays and objects; each just above and well above the parse cap of 64."""
    msgs = '"messages":[{"role":"user","content":"hi"}]'
    out = []
    for depth in (65, 2000):
        obj = '{"a":' * depth + "1" + "}" * depth
        arr = "[" * depth + "]" * depth
        out += [
            "{" + msgs + ',"chat_template_kwargs":' + obj + "}",
            "{" + msgs + ',"response_format":{"type":"json_schema","json_schema":{"name":"x",'
            '"schema":' + '{"type":"object","properties":{"a":' * min(depth, 300) + '{"type":"string"}'
            + "}}" * min(depth, 300) + "}}}",
            '{"model":"m",' + msgs + ',"tools":[{"type":"function","function":{"name":"f",'
            '"parameters":' + obj + "}}]}",
            '{"model":"m","messages":[{"role":"user","content":' + arr + "}]}",
            '{"model":"m","input":' + arr + "}",
            '{"model":"m","prompt":' + obj + "}",
            '{"model":"m","max_tokens":5,"system":' + arr + "," + msgs + "}",
            '{"model":"m",' + msgs + ',"cache_salt":' + obj + "}",
        ]
    out.append('{"model":"m",' + msgs + ',"cache_salt":"team-a-0123456789abcdef"}')
    return out


CONFIGS = [
    '{"default_priority": "batch", "priority_rules": [{"key": "sk-ci", "class": "batch"}, '
    '{"user_agent": "codex", "class": "interactive"}]}',
    '{"default_priority": "interactive"}',
    '{"priority_rules": []}',
]

SESSION_IDS = ["\x01s1\ns1:4", "\x00s1\n7", "\x01resp_ab12\nresp_ab12:0", "\x00s\n12"]

THINK = "<think>\nThe user wants the weather.\n</think>\n\n"
OUTPUTS = [
    "Hello! How can I help?",
    THINK + "It is sunny in Paris.",
    THINK + '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}\n</tool_call>',
    '<tool_call>\n{"name": "noop", "arguments": {}}\n</tool_call>\n<tool_call>\n'
    '{"name": "get_weather", "arguments": {"city": "Nice"}}\n</tool_call>',
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
    '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "abcdef123"}]',
    '{"name": "get_weather", "parameters": {"city": "Paris"}}',
    "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary "
    'to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>',
    "<|channel|>final<|message|>Sunny.",
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
    '{"city": "Paris"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
]


def hub_listings():
    sha, oid = "a" * 64, "b" * 40
    page = [
        {"type": "file", "path": "model-Q4_K_M.gguf", "size": 5, "oid": oid,
         "lfs": {"oid": sha, "size": 400000000, "pointerSize": 135}},
        {"type": "file", "path": "README.md", "size": 3, "oid": oid},
        {"type": "directory", "path": "Q8_0", "size": 0, "oid": oid},
        {"type": "file", "path": "Q8_0/model-00001-of-00002.gguf", "size": 9, "oid": oid,
         "lfs": {"oid": sha, "size": 9}},
    ]
    return [json.dumps(page), json.dumps(page[:1]), "[]",
            '<https://huggingface.co/api/models/a/b/tree/c?recursive=true&cursor=x>; rel="next"',
            '<https://h/p>; rel="prev", <https://h/n>; rel="next"']


def disk_entry(tokens, payload):
    body = b"SFPC" + struct.pack("<IIQ", 1, len(tokens), len(payload))
    body += struct.pack(f"<{len(tokens)}i", *tokens) + payload
    return body + hashlib.sha256(body).digest()


def disk_entries():
    good = disk_entry([1, 2, 3, 4], bytes(range(64)))
    return [good, good[:-1], good[:30], disk_entry([7], b""), good[:12] + b"\xff" * 8 + good[20:]]


def journals():
    sql = (ROOT / "src/journal/journal_store.cpp").read_text()
    schema = re.search(r'R"sql\((.*?)\)sql"', sql, re.S).group(1)
    out = []
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "j.db")
        db = sqlite3.connect(path)
        db.execute("PRAGMA page_size = 512")
        db.executescript(schema)
        db.execute("INSERT INTO sessions (id, api, model, class, seed, request, prompt_tokens,"
                   " cached_tokens, created_ms) VALUES ('sess_1', 'openai.chat', 'm', 1, 7,"
                   " x'0a0161', 5, 0, 1)")
        for i in range(3):
            db.execute("INSERT INTO tokens VALUES ('sess_1', ?, ?, ?, ?)", (i, 100 + i, b"ab", b"ab"))
        db.commit()
        db.close()
        whole = pathlib.Path(path).read_bytes()
    out += [whole, whole[: len(whole) // 2], whole[:100]]
    damaged = bytearray(whole)
    damaged[len(whole) - 300] ^= 0xFF  # a byte in the last pages
    out.append(bytes(damaged))
    return out


def write(folder, items):
    d = OUT / folder
    d.mkdir(parents=True, exist_ok=True)
    for old in d.iterdir():
        old.unlink()
    for item in items:
        data = item if isinstance(item, bytes) else item.encode()
        (d / hashlib.sha1(data).hexdigest()).write_bytes(data)
    print(f"{folder}: {len(set(items))} seeds")


def main():
    cases = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared/cases"
    write("requests", sorted(set(request_bodies(cases) + deep_bodies())))
    write("config", CONFIGS + ['{"priority_rules":' + "[" * 3000 + "]" * 3000 + "}"])
    write("session_ids", SESSION_IDS)
    # fuzz_chat_output: byte 0 picks the spec (13 of them: content only, then two per
    # template), byte 1 seeds the chunk sizes.
    write("chat_output", [bytes([spec, 7]) + out.encode() for spec in range(13) for out in OUTPUTS])
    write("hub_listing", hub_listings())
    write("disk_entry", disk_entries())
    write("journal", journals())


if __name__ == "__main__":
    main()
