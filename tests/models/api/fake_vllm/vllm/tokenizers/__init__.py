def get_tokenizer(name, tokenizer_mode="auto", trust_remote_code=False, revision=None, **kwargs):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(name, trust_remote_code=trust_remote_code, **kwargs)
