#!/usr/bin/env bash
# Builds the libFuzzer targets (in the CMake preset `asan`: clang, ASan+UBSan, K3_FUZZ=ON, the
# same build the sanitizer tests run from, so CI compiles the sanitized tree once) and runs each
# for a bounded time. Usage: scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 20)
#
# Assumes a Debian 12 machine with the normal build dependencies (cmake >= 3.25, ninja,
# libgtest-dev, nlohmann-json3-dev) plus clang-14 and libclang-rt-14-dev (libFuzzer and the
# sanitizer runtimes; Debian's `clang` package provides `clang++`).
# Environment: K3_SHARED_DIR (reference data, default ../shared), K3_FUZZ_JOBS (build parallelism,
# default nproc), K3_FUZZ_TIMEOUT (seconds one input may take before it counts as a hang,
# default 25).
#
# Prints one line per target: PASS with runs, executions per second and coverage, or FAIL with
# the crashing input's path and the log; exits 1 when any target failed.
set -euo pipefail

seconds="${1:-20}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# ccache keys on paths relative to the checkout, so another clone of the same commit (CI's) reuses
# this one's objects.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
build="$root/build/asan"
shared="${K3_SHARED_DIR:-$root/../shared}"
export K3_SHARED_DIR="$shared"

# Configured once (ninja re-runs CMake when a CMakeLists changes): a second `cmake --preset` moves
# libzmq's pkg-config include flags and so recompiles src/kvwire and what links it.
if [[ ! -f $build/build.ninja ]]; then cmake --preset asan >/dev/null; fi
targets=(tokenizer_encode_fuzzer tokenizer_decode_fuzzer tiktoken_ranks_fuzzer pretokenizer_fuzzer
         tokenizer_config_fuzzer safetensors_header_fuzzer jinja_fuzzer k3_render_fuzzer
         output_parser_fuzzer tool_ts_fuzzer api_request_fuzzer structured_fuzzer kvwire_fuzzer
         client_stream_fuzzer bpe_trainer_fuzzer)
# Only the fuzz targets and the seed writer (nothing to do where `scripts/test.sh asan` built the
# preset already).
cmake --build "$build" -j "${K3_FUZZ_JOBS:-$(nproc)}" --target "${targets[@]}" make_fuzz_seeds

# Seed corpora from the goldens (regenerated each run; the working corpora persist in build/).
rm -rf "$build/fuzz-seeds"
"$build/fuzz/make_fuzz_seeds" "$shared" "$build/fuzz-seeds"
mkdir -p "$build/fuzz-seeds/tokenizer_config_fuzzer"
for model in k2 k25 k3; do
  cp "$shared/kimi/$model/tokenizer_config.json" "$build/fuzz-seeds/tokenizer_config_fuzzer/$model.json"
done

# Small valid safetensors files: SEED_FILE HEADER_JSON DATA writes the header's length as a u64
# little-endian, the header, then the data section (ASCII only, so bytes = characters).
safetensors_seed() {
  local n=${#2} prefix=""
  for shift in 0 8 16 24 32 40 48 56; do prefix+="$(printf '\\x%02x' $(((n >> shift) & 255)))"; done
  { printf "$prefix"; printf '%s%s' "$2" "$3"; } >"$1"
}
st_seeds="$build/fuzz-seeds/safetensors_header_fuzzer"
mkdir -p "$st_seeds"
safetensors_seed "$st_seeds/f32" \
  '{"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}}' \
  '0123456789abcdef'
safetensors_seed "$st_seeds/mixed" \
  '{"a":{"dtype":"BF16","shape":[4],"data_offsets":[0,8]},'\
'"b":{"dtype":"F8_E4M3","shape":[2,4],"data_offsets":[8,16]},'\
'"e":{"dtype":"I64","shape":[0,3],"data_offsets":[16,16]}}' \
  'ABCDEFGHabcdefgh'
safetensors_seed "$st_seeds/scalar" '{"s":{"dtype":"U8","shape":[],"data_offsets":[0,1]}}  ' 'x'
safetensors_seed "$st_seeds/empty" '{}      ' ''
# Its dictionary: the keys (quoted, as in the JSON), dtype names and boundary numbers.
printf '"\\"%s\\""\n' dtype shape data_offsets __metadata__ F8_E4M3 BF16 F32 I64 U8 F8_E8M0 \
  >"$build/fuzz-seeds/safetensors.dict"
printf '"%s"\n' 18446744073709551615 9223372036854775807 -1 >>"$build/fuzz-seeds/safetensors.dict"

# The Jinja engine: Moonshot's chat templates as seeds.
mkdir -p "$build/fuzz-seeds/jinja_fuzzer"
for model in k2 k2-thinking k25; do
  cp "$shared/kimi/$model/chat_template.jinja" "$build/fuzz-seeds/jinja_fuzzer/$model.jinja"
done

# Request bodies, renders and tool lists from the chat goldens; for the structured-output fuzzer,
# SCHEMA 0x00 INSTANCE with one valid and one invalid instance per line of the schema corpus.
for target in api_request_fuzzer k3_render_fuzzer tool_ts_fuzzer structured_fuzzer; do
  mkdir -p "$build/fuzz-seeds/$target"
done
/usr/bin/python3 - "$shared" "$build/fuzz-seeds" "$root/tests/structured/schema_corpus.jsonl" <<'PY' || true
import json, sys, os
shared, seeds, schema_corpus = sys.argv[1], sys.argv[2], sys.argv[3]
for n, line in enumerate(open(schema_corpus, encoding="utf-8")):
    case = json.loads(line)
    schema = json.dumps(case["schema"], ensure_ascii=False).encode()
    for kind in ("valid", "invalid"):
        if case.get(kind):
            instance = case[kind][n % len(case[kind])].encode()
            open(os.path.join(seeds, "structured_fuzzer", f"{n}_{kind}"), "wb").write(schema + b"\0" + instance)
for n, line in enumerate(open(os.path.join(shared, "goldens/chat/k3_render.jsonl"))):
    request = json.dumps(json.loads(line)["request"], ensure_ascii=False).encode()
    open(os.path.join(seeds, "k3_render_fuzzer", f"{n}.json"), "wb").write(request)
    open(os.path.join(seeds, "api_request_fuzzer", f"{n}.json"), "wb").write(bytes([n % 4]) + request)
# Responses API bodies (first byte 4): items of every kind, tools, text.format, reasoning.
responses = [
    {"input": "hi", "instructions": "be brief", "max_output_tokens": 16, "stream": True},
    {"input": [{"role": "user", "content": [{"type": "input_text", "text": "w?"}, {"type": "input_image", "image_url": "data:image/png;base64,AA"}]},
               {"type": "reasoning", "summary": [{"type": "summary_text", "text": "t"}]},
               {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
               {"type": "function_call_output", "call_id": "c", "output": "ok"}],
     "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}}, {"type": "web_search"}],
     "tool_choice": {"type": "function", "name": "f"}, "reasoning": {"effort": "minimal"}},
    {"input": "x", "text": {"format": {"type": "json_schema", "name": "a", "schema": {"type": "object"}}}},
]
for n, body in enumerate(responses):
    open(os.path.join(seeds, "api_request_fuzzer", f"responses_{n}.json"), "wb").write(bytes([4]) + json.dumps(body).encode())
for n, line in enumerate(open(os.path.join(shared, "goldens/chat/tool_ts.jsonl"))):
    tools = json.dumps(json.loads(line)["tools"], ensure_ascii=False).encode()
    open(os.path.join(seeds, "tool_ts_fuzzer", f"{n}.json"), "wb").write(tools)
PY

# The structured-output fuzzer's dictionary: JSON Schema keywords and type names (quoted, as in the
# JSON), and JSON escapes that reach the string lexer's corners (surrogates, control characters).
printf '"\\"%s\\""\n' type properties required additionalProperties items enum const anyOf oneOf \
  '$ref' '$defs' definitions minLength maxLength minItems maxItems minimum maximum \
  exclusiveMinimum exclusiveMaximum object array string integer number boolean null \
  pattern format prefixItems minProperties maxProperties allOf date-time date time duration \
  email hostname ipv4 ipv6 uri uuid \
  >"$build/fuzz-seeds/structured.dict"
# Pattern pieces (the ECMA-262 subset compiled to automata): classes, escapes, quantifiers.
printf '"%s"\n' '[a-z]' '[^0-9]' '\\d' '\\w' '\\s' '{2,5}' '(a|b)' '^' '$' '(?=' '\\1' \
  >>"$build/fuzz-seeds/structured.dict"
printf '"%s"\n' '#/$defs/' '\\ud83d\\ude00' '\\udc00' '\\u0000' '\\u001f' '1e308' '-0.0' \
  >>"$build/fuzz-seeds/structured.dict"

# kvwire messages (msgpack, src/kvwire/codec.h): a batch [1,1,5,[[1,0,[7,8],nil,32,16]]], a request
# [2,1,5] and a snapshot reply [3,1,5,1,10,[[0,0,[7],3,16,16]]] (kvwire's GoldenBytes test).
kv_seeds="$build/fuzz-seeds/kvwire_fuzzer"
mkdir -p "$kv_seeds"
printf '\x94\x01\x01\x05\x91\x96\x01\x00\x92\x07\x08\xc0\x20\x10' >"$kv_seeds/batch"
printf '\x93\x02\x01\x05' >"$kv_seeds/request"
printf '\x96\x03\x01\x05\x01\x0a\x91\x96\x00\x00\x91\x07\x03\x10\x10' >"$kv_seeds/reply"

# Client-side streams (client_stream_fuzzer): an OpenAI chat stream with usage, an Anthropic
# Messages stream, and Prometheus text.
cs_seeds="$build/fuzz-seeds/client_stream_fuzzer"
mkdir -p "$cs_seeds"
printf '%s\n\n' \
  'data: {"id":"a","object":"chat.completion.chunk","created":1,"choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":null}]}' \
  'data: {"id":"a","object":"chat.completion.chunk","created":1,"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}' \
  'data: {"id":"a","object":"chat.completion.chunk","created":1,"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4,"prompt_tokens_details":{"cached_tokens":2}}}' \
  'data: [DONE]' >"$cs_seeds/chat"
printf '%s\n\n' \
  'event: message_start
data: {"type":"message_start","message":{"type":"message","role":"assistant","content":[],"usage":{"input_tokens":3,"output_tokens":0}}}' \
  'event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}' \
  'event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}' \
  'event: content_block_stop
data: {"type":"content_block_stop","index":0}' \
  'event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}' \
  'event: message_stop
data: {"type":"message_stop"}' >"$cs_seeds/messages"
printf 'k3_prompt_tokens_total{endpoint="a"} 10\nk3_prefix_cache_hit_tokens_total 4\n' >"$cs_seeds/metrics"

export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

failed=0
for target in "${targets[@]}"; do
  corpus="$build/fuzz-corpus/$target"
  artifacts="$build/fuzz-artifacts/$target"
  log="$build/fuzz-logs/$target.log"
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")" "$build/fuzz-seeds/$target"
  extra=()
  case "$target" in
    tokenizer_encode_fuzzer | tiktoken_ranks_fuzzer)
      extra+=(-dict="$build/fuzz-seeds/specials.dict") ;;
    safetensors_header_fuzzer)
      extra+=(-dict="$build/fuzz-seeds/safetensors.dict") ;;
    structured_fuzzer)
      extra+=(-dict="$build/fuzz-seeds/structured.dict") ;;
  esac
  status=0
  "$build/fuzz/$target" "$corpus" "$build/fuzz-seeds/$target" "${extra[@]}" \
    -max_total_time="$seconds" -max_len=4096 -rss_limit_mb=2048 \
    -timeout="${K3_FUZZ_TIMEOUT:-25}" -artifact_prefix="$artifacts/" -print_final_stats=1 \
    >"$log" 2>&1 || status=$?
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  speed="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)"
  cov="$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2 || true)"
  if [[ $status -eq 0 ]]; then
    printf 'PASS %-25s %8s runs %6s exec/s  cov %s\n' \
      "$target" "${runs:-?}" "${speed:-?}" "${cov:-?}"
  else
    failed=1
    crash="$(sed -n 's/.*Test unit written to //p' "$log" | tail -1)"
    printf 'FAIL %-25s exit %d  input %s  log %s\n' "$target" "$status" "${crash:-?}" "$log"
    # The first line saying what went wrong (a failed check or a sanitizer report).
    why="$(grep -m1 -E 'check failed|ERROR: |runtime error' "$log" || true)"
    if [[ -n $why ]]; then printf "     %s\n" "$why"; fi
  fi
done
exit "$failed"
