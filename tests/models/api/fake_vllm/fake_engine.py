"""The deterministic "model" behind the fake vLLM (both the fake offline engine, driven by the
reference's VLLM class in scripts/gen_vllm_goldens.py, and the fake OpenAI-compatible server that
lm-eval's --model vllm starts in tests): one token's logprob given the previous one, the greedy
next token, and generation as words. Not vLLM's numbers; the same numbers on both sides."""

VOCAB = 512


def greedy(prev):
    return (prev * 7 + 3) % VOCAB


def logprob(prev, tok):
    if tok == greedy(prev):
        return -0.125
    return -(1.0 + ((prev * 31 + tok) % 13) / 8.0)


def prompt_logprobs(ids):
    """vLLM's prompt_logprobs with prompt_logprobs=1: None first, then per position the prompt
    token's entry followed by the top-1 token's when it differs: (token, logprob, rank)."""
    out = [None]
    for i in range(1, len(ids)):
        prev, tok = ids[i - 1], ids[i]
        g = greedy(prev)
        entry = [(tok, logprob(prev, tok), 1 if tok == g else 2)]
        if tok != g:
            entry.append((g, logprob(prev, g), 1))
        out.append(entry)
    return out


def generate(ids, max_tokens, stop):
    """Greedy words w<id> from the last prompt token, cut before the first stop string (vLLM's
    default include_stop_str_in_output=False)."""
    prev, words = ids[-1] if ids else 0, []
    for _ in range(max_tokens):
        prev = greedy(prev)
        words.append(f"w{prev}")
    text = " " + " ".join(words) + "\n\nQ: more"
    cut = len(text)
    for s in stop or []:
        if s and s in text:
            cut = min(cut, text.index(s))
    return text[:cut]
