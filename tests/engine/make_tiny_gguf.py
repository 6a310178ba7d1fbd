#!/usr/bin/env python3
"""Writes a tiny random-weight llama model as GGUF, for the engine tests.

usage: make_tiny_gguf.py OUT.gguf [--seed N] [--layers 2] [--embd 64]
                         [--heads 4] [--kv-heads H] [--ff 128] [--ctx 4096]

Nothing is downloaded: the weights are random (seeded, so the same arguments
give the same bytes), small enough in scale that no activation overflows, and
the tokenizer is a SentencePiece-style ("llama") vocabulary that llama.cpp
accepts for any ASCII text:

  0 <unk>, 1 <s> (BOS), 2 </s> (EOS), 3..258 the byte-fallback tokens
  <0x00>..<0xFF>, then every printable ASCII character (space as U+2581),
  then a few common English pieces so that merges happen.

The model says nothing sensible; it loads, tokenizes, decodes and generates,
which is all the engine backend's tests need of it. Needs numpy and gguf
(scripts/requirements-engine.txt, installed by scripts/deps.sh into
third_party/venv-engine).
"""
import argparse
import os
import sys

import numpy as np
import gguf

SP = "\u2581"  # SentencePiece's word boundary, stands for a space

WORDS = ["the", "and", "of", "to", "in", "is", "that", "it", "for", "on",
         "with", "as", "was", "at", "by", "an", "be", "this", "are", "or",
         "from", "one", "all", "we", "you", "can", "will", "not", "have", "but"]


def vocab():
    """Returns (tokens, scores, types): the special, byte, char and word pieces."""
    toks = ["<unk>", "<s>", "</s>"]
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    for b in range(256):
        toks.append(f"<0x{b:02X}>")
        types.append(gguf.TokenType.BYTE)
    for c in range(0x20, 0x7F):
        toks.append(SP if c == 0x20 else chr(c))
        types.append(gguf.TokenType.NORMAL)
    pieces = []
    for w in WORDS:
        for i in range(2, len(w) + 1):  # every prefix, so merges can build the word
            pieces += [w[:i], SP + w[:i]]
    pieces.append(SP + SP)
    for p in pieces:
        if p not in toks:
            toks.append(p)
            types.append(gguf.TokenType.NORMAL)
    # specials and bytes score 0; longer pieces score higher so they merge first
    scores = [0.0] * len(toks)
    for i, (t, ty) in enumerate(zip(toks, types)):
        if ty == gguf.TokenType.NORMAL:
            scores[i] = -1000.0 + 10.0 * len(t) - i * 1e-3
    return toks, scores, [int(t) for t in types]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--embd", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=0, help="default: --heads")
    ap.add_argument("--ff", type=int, default=128)
    ap.add_argument("--ctx", type=int, default=4096)
    a = ap.parse_args()
    kvh = a.kv_heads or a.heads
    if a.embd % a.heads or a.heads % kvh or (a.embd // a.heads) % 2:
        ap.error("--embd must be a multiple of --heads, --heads of --kv-heads, head size even")
    hd = a.embd // a.heads

    toks, scores, types = vocab()
    nv = len(toks)
    rng = np.random.default_rng(a.seed)

    def rand(*shape):
        # numpy shape is (rows, cols) = (out, in); scale 1/sqrt(in) keeps activations O(1)
        return (rng.standard_normal(shape) / np.sqrt(shape[-1])).astype(np.float32)

    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    w = gguf.GGUFWriter(a.out, "llama")
    w.add_name("muh-tiny-llama")
    w.add_context_length(a.ctx)
    w.add_embedding_length(a.embd)
    w.add_block_count(a.layers)
    w.add_feed_forward_length(a.ff)
    w.add_head_count(a.heads)
    w.add_head_count_kv(kvh)
    w.add_rope_dimension_count(hd)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(nv)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)

    w.add_tokenizer_model("llama")
    w.add_tokenizer_pre("default")
    w.add_token_list(toks)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)

    w.add_tensor("token_embd.weight", rand(nv, a.embd))
    w.add_tensor("output_norm.weight", np.ones(a.embd, dtype=np.float32))
    w.add_tensor("output.weight", rand(nv, a.embd))
    for i in range(a.layers):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", np.ones(a.embd, dtype=np.float32))
        w.add_tensor(p + "attn_q.weight", rand(a.embd, a.embd))
        w.add_tensor(p + "attn_k.weight", rand(kvh * hd, a.embd))
        w.add_tensor(p + "attn_v.weight", rand(kvh * hd, a.embd))
        w.add_tensor(p + "attn_output.weight", rand(a.embd, a.embd))
        w.add_tensor(p + "ffn_norm.weight", np.ones(a.embd, dtype=np.float32))
        w.add_tensor(p + "ffn_gate.weight", rand(a.ff, a.embd))
        w.add_tensor(p + "ffn_up.weight", rand(a.ff, a.embd))
        w.add_tensor(p + "ffn_down.weight", rand(a.embd, a.ff))

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
