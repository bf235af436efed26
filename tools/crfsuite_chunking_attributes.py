#!/usr/bin/env python3
"""CoNLL-2000 `word POS chunk` lines (stdin) to CRFsuite attribute lines
(stdout), exactly as CRFsuite's example/chunking.py writes them.

  ./bazelw run //tools:crfsuite_chunking_attributes \
      < train.txt > train.crfsuite

Attributes per token, template by template: the words w[-2..2], the word
bigrams w[-1]|w[0] and w[0]|w[1], the POS tags pos[-2..2], their bigrams
and trigrams; an attribute is `name=values` (values joined by '|'), dropped
when a position falls outside the sentence. The first token also gets
__BOS__, the last __EOS__; every ':' becomes __COLON__ (CRFsuite's
separator of names and values). A line is the chunk tag, then the
attributes, TAB-separated; a blank line ends a sentence.
"""

import sys

FIELDS = ("w", "pos", "y")

TEMPLATES = (
    (("w", -2),),
    (("w", -1),),
    (("w", 0),),
    (("w", 1),),
    (("w", 2),),
    (("w", -1), ("w", 0)),
    (("w", 0), ("w", 1)),
    (("pos", -2),),
    (("pos", -1),),
    (("pos", 0),),
    (("pos", 1),),
    (("pos", 2),),
    (("pos", -2), ("pos", -1)),
    (("pos", -1), ("pos", 0)),
    (("pos", 0), ("pos", 1)),
    (("pos", 1), ("pos", 2)),
    (("pos", -2), ("pos", -1), ("pos", 0)),
    (("pos", -1), ("pos", 0), ("pos", 1)),
    (("pos", 0), ("pos", 1), ("pos", 2)),
)


def escape(text):
    return text.replace(":", "__COLON__")


def attributes(sentence):
    """Per token, its attribute strings, in CRFsuite's order."""
    out = [[] for _ in sentence]
    n = len(sentence)
    for template in TEMPLATES:
        name = "|".join("%s[%d]" % (field, offset) for field, offset in template)
        for t in range(n):
            values = []
            for field, offset in template:
                p = t + offset
                if p < 0 or p >= n:
                    values = []
                    break
                values.append(sentence[p][field])
            if values:
                out[t].append("%s=%s" % (name, "|".join(values)))
    if out:
        out[0].append("__BOS__")
        out[-1].append("__EOS__")
    return out


def write_sentence(sentence, out):
    for token, attrs in zip(sentence, attributes(sentence)):
        out.write(token["y"])
        for a in attrs:
            out.write("\t" + escape(a))
        out.write("\n")
    out.write("\n")


def main():
    out = sys.stdout
    sentence = []
    for number, line in enumerate(sys.stdin, 1):
        line = line.rstrip("\n")
        if not line:
            if sentence:
                write_sentence(sentence, out)
            sentence = []
            continue
        fields = line.split(" ")
        if len(fields) != len(FIELDS):
            sys.stderr.write(
                "stdin:%d: expected %d fields (word POS chunk), got %d\n"
                % (number, len(FIELDS), len(fields)))
            return 1
        sentence.append(dict(zip(FIELDS, fields)))
    if sentence:
        write_sentence(sentence, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
