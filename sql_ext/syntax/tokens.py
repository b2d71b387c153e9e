"""The one tokenizer of the SQL layer and the cursor every hand-written grammar reads with.

`tokenize` runs the `PaimonSpark` tokenizer once per statement, word by word (commands such
as `SHOW` or `EXPLAIN` are not swallowed into one string token, so Paimon syntax inside them
is seen too). The statement parsers (`sql_ext.syntax.parse`) share that token list; the
grammars sqlglot lacks (tag DDL, ALTER, database statements, SHOW) read it with `Cursor`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType

from sql_ext.errors import SqlParseError
from sql_ext.syntax.dialect import PaimonSpark

__all__ = ["Cursor", "dotted_name", "is_name", "like_pattern", "matches_pattern", "tokenize"]

NAME_TOKENS = frozenset({TokenType.VAR, TokenType.IDENTIFIER})
_WORD = re.compile(r"[A-Za-z_]\w*")
_DIALECT = PaimonSpark()


class ScanTokenizer(PaimonSpark.Tokenizer):
    """`PaimonSpark`'s tokenizer with no command tokens: every word is a token."""

    COMMANDS: set[TokenType] = set()


def tokenize(text: str) -> list[Token]:
    """The tokens of `text`, every word one token.

    Raises:
        SqlParseError: the text does not tokenize (an unterminated quote, ...).
    """
    try:
        return ScanTokenizer(dialect=_DIALECT).tokenize(text)
    except TokenError as e:
        raise SqlParseError(f"Cannot tokenize the statement: {e.__cause__ or e}") from e


def is_name(token: Token) -> bool:
    """A name, or a word Spark reads as one there (`default`, `sys`, other keywords)."""
    if token.token_type in NAME_TOKENS:
        return True
    return token.token_type not in (TokenType.STRING, TokenType.NUMBER) and bool(
        _WORD.fullmatch(token.text)
    )


def dotted_name(tokens: Sequence[Token], position: int) -> tuple[tuple[str, ...], int]:
    """The parts of ``a.b.c`` starting at ``position``, and the position after them."""
    parts: list[str] = []
    while position < len(tokens) and is_name(tokens[position]):
        parts.append(tokens[position].text)
        position += 1
        if position < len(tokens) and tokens[position].token_type == TokenType.DOT:
            position += 1
        else:
            break
    return tuple(parts), position


def like_pattern(tokens: Sequence[Token], position: int) -> tuple[str | None, int]:
    """`[LIKE] 'pattern'` at ``position``: the pattern (None: none) and the position after."""
    if position < len(tokens) and tokens[position].text.upper() == "LIKE":
        position += 1
    if position < len(tokens) and tokens[position].token_type == TokenType.STRING:
        return tokens[position].text, position + 1
    return None, position


def matches_pattern(name: str, pattern: str | None) -> bool:
    """Spark's `StringUtils.filterPattern`: `*` is any text, `|` separates alternatives."""
    if pattern is None:
        return True
    for alternative in pattern.split("|"):
        try:
            if re.fullmatch(alternative.strip().replace("*", ".*"), name, re.IGNORECASE):
                return True
        except re.error:
            continue
    return False


class Cursor:
    """A position in a statement's tokens with keyword matching and one-line failures that
    name the statement (`label`) and where it went wrong."""

    def __init__(self, tokens: Sequence[Token], text: str, label: str, position: int = 0) -> None:
        self.tokens = tokens
        self.text = text
        self.label = label
        self.i = position

    def at_end(self) -> bool:
        return self.i >= len(self.tokens) or self.tokens[self.i].token_type == TokenType.SEMICOLON

    def peek(self, *words: str) -> bool:
        """Whether the next tokens are these keywords (not quoted)."""
        window = self.tokens[self.i : self.i + len(words)]
        return len(window) == len(words) and all(
            t.text.upper() == w and t.token_type not in (TokenType.STRING, TokenType.IDENTIFIER)
            for t, w in zip(window, words)
        )

    def peek_type(self, kind: TokenType) -> bool:
        return self.i < len(self.tokens) and self.tokens[self.i].token_type == kind

    def accept(self, *words: str) -> bool:
        if self.peek(*words):
            self.i += len(words)
            return True
        return False

    def accept_type(self, kind: TokenType) -> bool:
        if self.peek_type(kind):
            self.i += 1
            return True
        return False

    def expect(self, *words: str) -> None:
        if not self.accept(*words):
            raise self.error(f"expected {' '.join(words)}")

    def expect_type(self, kind: TokenType, what: str) -> None:
        if not self.accept_type(kind):
            raise self.error(f"expected {what}")

    def error(self, message: str) -> SqlParseError:
        if not self.at_end():
            token = self.tokens[self.i]
            return SqlParseError(
                f"{self.label}: {message} near '{token.text}'", token.line, token.col
            )
        return SqlParseError(f"{self.label}: {message} at the end of the statement")

    def identifier(self, what: str) -> str:
        if not self.at_end():
            token = self.tokens[self.i]
            if token.token_type == TokenType.STRING:
                raise self.error(f"{what} must be an identifier (use back-quotes, not quotes)")
            if token.token_type in NAME_TOKENS or token.text.isidentifier():
                self.i += 1
                return token.text
        raise self.error(f"expected {what}")

    def dotted(self, what: str) -> tuple[str, ...]:
        parts = [self.identifier(what)]
        while self.accept_type(TokenType.DOT):
            parts.append(self.identifier(what))
        return tuple(parts)

    def integer(self, what: str) -> int:
        if self.peek_type(TokenType.NUMBER) and self.tokens[self.i].text.isdigit():
            self.i += 1
            return int(self.tokens[self.i - 1].text)
        raise self.error(f"expected {what} (a whole number)")

    def string(self, what: str) -> str:
        if self.peek_type(TokenType.STRING):
            self.i += 1
            return self.tokens[self.i - 1].text
        raise self.error(f"expected {what} (a quoted string)")

    def end(self) -> None:
        """The statement ends here (trailing `;` aside)."""
        while self.accept_type(TokenType.SEMICOLON):
            pass
        if self.i < len(self.tokens):
            raise self.error("unexpected text")

    def rest(self) -> str:
        """The statement's text from the current token on."""
        if self.i >= len(self.tokens):
            return ""
        return self.text[self.tokens[self.i].start :]
