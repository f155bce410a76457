#!/usr/bin/env python3
"""Measures on a real GPU what the fleet model's roofline assumes (issue 32): prefill time at 1k-32k tokens of
context, the decode step at batch 1-256, and host<->device copies from pinned and pageable memory, for a randomly
initialised Llama-3.1-8B-shaped model in bf16 (transformers' LlamaConfig: nothing is downloaded). Prints one JSON
object (and writes it to --out): the GPU's name, the date, the versions, and every figure with how it was measured.

Without a CUDA device it says so and exits 0: nothing is measured, nothing fails.

    python3 bench/gpu-calibrate.py --out docs/benchmarks/gpu-calibration-h100.json    # a few minutes
"""
import argparse
import datetime
import json
import sys
import time


def timed(fn, torch, repeat=3):
    """The least of `repeat` runs of fn() in seconds, after one warm-up, CUDA-synchronised."""
    fn()
    torch.cuda.synchronize()
    best = float('inf')
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
    return best


def copies(torch):
    out = {}
    for mib in (64, 1024):
        n = mib << 20
        dev = torch.empty(n, dtype=torch.uint8, device='cuda')
        for pinned in (True, False):
            host = torch.empty(n, dtype=torch.uint8, pin_memory=pinned)
            kind = 'pinned' if pinned else 'pageable'
            h2d = timed(lambda: dev.copy_(host, non_blocking=pinned), torch)
            d2h = timed(lambda: host.copy_(dev, non_blocking=pinned), torch)
            out['h2d_%s_%dmib_gbps' % (kind, mib)] = round(n / h2d / 1e9, 2)
            out['d2h_%s_%dmib_gbps' % (kind, mib)] = round(n / d2h / 1e9, 2)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--out', help='also write the JSON here')
    ap.add_argument('--contexts', default='1024,2048,4096,8192,16384,32768')
    ap.add_argument('--batches', default='1,8,32,64,128,256')
    ap.add_argument('--decode-context', type=int, default=1024, help='tokens each decoding sequence holds')
    ap.add_argument('--layers', type=int, default=32, help='fewer for a quick check (figures scale per layer)')
    a = ap.parse_args()
    try:
        import torch
    except ImportError:
        print(json.dumps({'measured': False, 'why': 'PyTorch is not installed'}))
        return 0
    if not torch.cuda.is_available():
        print(json.dumps({'measured': False, 'why': 'no CUDA device'}))
        return 0
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(hidden_size=4096, intermediate_size=14336, num_hidden_layers=a.layers, num_attention_heads=32,
                      num_key_value_heads=8, vocab_size=128256, max_position_embeddings=131072, rope_theta=500000.0)
    torch.manual_seed(0)
    with torch.device('cuda'):
        model = LlamaForCausalLM(cfg).to(torch.bfloat16).eval()
    result = {
        'measured': True, 'gpu': torch.cuda.get_device_name(0), 'date': datetime.date.today().isoformat(),
        'torch': torch.__version__, 'transformers': __import__('transformers').__version__,
        'model': 'Llama-3.1-8B-shaped, random weights, bf16, %d of 32 layers' % a.layers,
        'how': 'least of 3 CUDA-synchronised runs after a warm-up; prefill: one sequence of CONTEXT tokens, batch 1; '
               'decode: one token for BATCH sequences of --decode-context tokens each (HF DynamicCache); copies: '
               'torch copy_ of 64 MiB and 1 GiB',
        'prefill': [], 'decode': [], 'copies': copies(torch),
    }
    with torch.inference_mode():
        for ctx in (int(x) for x in a.contexts.split(',')):
            ids = torch.randint(0, cfg.vocab_size, (1, ctx), device='cuda')
            try:
                s = timed(lambda: model(ids, use_cache=False, logits_to_keep=1), torch)
            except torch.cuda.OutOfMemoryError:
                result['prefill'].append({'context': ctx, 'error': 'out of memory'})
                torch.cuda.empty_cache()
                continue
            result['prefill'].append({'context': ctx, 'seconds': round(s, 5), 'tokens_per_s': round(ctx / s),
                                      'kv_gbps': round(ctx * 131072 * a.layers / 32 / s / 1e9, 2)})
        for b in (int(x) for x in a.batches.split(',')):
            try:
                ids = torch.randint(0, cfg.vocab_size, (b, a.decode_context), device='cuda')
                past = model(ids, use_cache=True, logits_to_keep=1).past_key_values
                step = torch.randint(0, cfg.vocab_size, (b, 1), device='cuda')

                def one():
                    model(step, past_key_values=past, use_cache=True)
                    past.crop(a.decode_context)  # the same context every run
                s = timed(one, torch)
            except torch.cuda.OutOfMemoryError:
                result['decode'].append({'batch': b, 'error': 'out of memory'})
                torch.cuda.empty_cache()
                continue
            result['decode'].append({'batch': b, 'context': a.decode_context, 'step_seconds': round(s, 6)})
    text = json.dumps(result, indent=2)
    print(text)
    if a.out:
        with open(a.out, 'w') as f:
            f.write(text + '\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
