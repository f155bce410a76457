"""Makes the small tokenizer TokenizerTest loads (kvtier-router/src/test/resources/tokenizer): a byte-level BPE trained
on a few sentences, with a BOS token added in front of every encoding as Llama's tokenizers do, and the ids Hugging
Face's own tokenizers library gives for a few texts, with and without special tokens (expected.txt).
Run: /tmp/v/bin/pip install tokenizers==0.23.2 && /tmp/v/bin/python kvtier-router/src/test/python/make_tokenizer.py OUT
"""
import json
import os
import sys

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

CORPUS = [
    "The KV cache of a prompt prefix is reused when the same prefix comes again.",
    "kvtier keeps KV-cache chunks in memory and on SSD, and routes requests to where their prefix is.",
    "You are a helpful assistant. Answer briefly and cite your sources.",
    "Ünïcödé, emoji 🚀 and tabs\tstay bytes: byte-level BPE never fails on them.",
] * 20

TEXTS = [
    "The KV cache of a prompt prefix is reused.",
    "You are a helpful assistant.",
    "Ünïcödé 🚀 and unseen words: zyxwvut",
    "",
]


def main(out):
    os.makedirs(out, exist_ok=True)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(CORPUS, trainers.BpeTrainer(vocab_size=400, special_tokens=["<s>", "</s>"],
                                                          initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    bos = tok.token_to_id("<s>")
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", bos)])
    tok.save(os.path.join(out, "tokenizer.json"))
    with open(os.path.join(out, "expected.txt"), "w") as f:
        f.write("# text (JSON string) TAB ids with special tokens TAB ids without; tokenizers %s\n"
                % __import__("tokenizers").__version__)
        for text in TEXTS:
            with_special = tok.encode(text).ids
            without = tok.encode(text, add_special_tokens=False).ids
            f.write("%s\t%s\t%s\n" % (json.dumps(text), json.dumps(with_special), json.dumps(without)))


if __name__ == "__main__":
    main(sys.argv[1])
