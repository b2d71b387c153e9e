"""sqlglot dialect for Paimon's Spark SQL extensions.

`PaimonSpark` is Spark plus what Paimon's Spark extension parser accepts on top of it:

* `CALL [catalog.]sys.<name>(<args>)` with named (`name => value`) or positional constant
  arguments, as in `PaimonSqlExtensions.g4` (number literals with suffixes, TRUE/FALSE, adjacent
  string literals, typed literals such as `TIMESTAMP '...'`, `MAP(...)`);
* `$` inside unquoted names (`t$snapshots`, `db.t$branch_b1$files`), which Spark's lexer splits;
* every spelling of Spark's time travel clause (`[FOR] VERSION|SYSTEM_VERSION AS OF`,
  `[FOR] TIMESTAMP|SYSTEM_TIME AS OF`);
* Spark's `REPLACE TABLE ...` (a `Create` with `replace` set and `meta[REPLACE_ONLY]`), which
  sqlglot's Spark dialect does not parse.

It only builds syntax trees: argument values are checked and converted by `sql_ext.syntax.parse`.
Besides sqlglot's positions of names, it records where some constructs end in the text
(`END`: a time travel clause, a TABLESAMPLE) or lie (`SPAN`: a CTE list, the query of an INSERT
or CREATE TABLE ... AS), so that `sql_ext.syntax.parse` can edit the user's text in place instead of
generating SQL from the tree.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.generators.spark import SparkGenerator
from sqlglot.tokens import Token, TokenType

END = "paimon_end"
"""`meta` key: offset just past the node's last token."""
SPAN = "paimon_span"
"""`meta` key: `(start, end)` offsets of the node's text, end exclusive."""
REPLACE_ONLY = "paimon_replace_only"
"""`meta` key of a `Create` parsed from `REPLACE TABLE` (not `CREATE OR REPLACE TABLE`)."""

# Suffixes of Spark number literals (`10L`, `1.5BD`); the tokenizer turns them into `::TYPE`.
NUMBER_SUFFIXES = frozenset(Spark.Tokenizer.NUMERIC_LITERALS)


_E = TypeVar("_E", bound=exp.Expr)


def quote_identifier(name: str) -> str:
    """`name` back-quoted for Spark SQL, so that any text (`t$x`, a quote) is one name."""
    return "`" + name.replace("`", "``") + "`"


class Call(exp.Expression):
    """`CALL <name>(<args>)`: `this` is the dotted name, `expressions` the arguments."""

    arg_types = {"this": True, "expressions": False}

    @property
    def parts(self) -> list[str]:
        """The name parts as written, e.g. `['paimon', 'sys', 'create_tag']`."""
        this = self.this
        nodes = this.flatten() if isinstance(this, exp.Dot) else [this]
        return [node.name for node in nodes]


class NamedArg(exp.Expression):
    """`name => value` inside a CALL: `this` is the name identifier, `expression` the value."""

    arg_types = {"this": True, "expression": True}


class TypedLiteral(exp.Expression):
    """A Spark typed literal kept as written, e.g. `DATE '2024-01-01'`.

    `this` is the upper-cased type name, `expression` the string literal.
    """

    arg_types = {"this": True, "expression": True}


def _call_sql(self: SparkGenerator, expression: Call) -> str:
    return f"CALL {self.sql(expression, 'this')}({self.expressions(expression, flat=True)})"


def _named_arg_sql(self: SparkGenerator, expression: NamedArg) -> str:
    return f"{self.sql(expression, 'this')} => {self.sql(expression, 'expression')}"


def _typed_literal_sql(self: SparkGenerator, expression: TypedLiteral) -> str:
    return f"{expression.name} {self.sql(expression, 'expression')}"


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _parse_json_sql(self: SparkGenerator, expression: exp.ParseJSON) -> str:
    """Spark's ``parse_json``/``try_parse_json`` (sqlglot's Spark generator drops the call and
    keeps only the string, which turns a VARIANT into a STRING)."""
    name = "TRY_PARSE_JSON" if expression.args.get("safe") else "PARSE_JSON"
    return self.func(name, expression.this)


def _json_extract_sql(self: SparkGenerator, expression: exp.JSONExtract) -> str:
    """Spark 4's variant path ``v:a.b[0]`` as written; other JSON extractions as Spark's."""
    if not expression.args.get("variant_extract"):
        return self.func("GET_JSON_OBJECT", expression.this, expression.expression)
    path = []
    for part in expression.expression.expressions:
        if isinstance(part, exp.JSONPathRoot):
            continue
        if isinstance(part, exp.JSONPathKey):
            key = str(part.this)
            if _PLAIN_KEY.fullmatch(key):
                path.append(f".{key}" if path else key)
            else:
                path.append("[" + exp.Literal.string(key).sql(dialect="spark") + "]")
        elif isinstance(part, exp.JSONPathSubscript):
            path.append(f"[{part.this}]")
        else:
            self.unsupported(f"Unsupported variant path part {part.sql()}")
            path.append(part.sql())
    return f"{self.sql(expression, 'this')}:{''.join(path)}"


def _is_word(token: Token) -> bool:
    """A bare word (keyword or name) as Paimon's `identifier` rule accepts it."""
    text = token.text
    return (
        token.token_type not in (TokenType.STRING, TokenType.NUMBER)
        and bool(text)
        and text.replace("_", "a").isalnum()
    )


class PaimonSpark(Spark):
    """Spark SQL with Paimon's CALL statement, `$` system tables and time travel spellings."""

    class Tokenizer(Spark.Tokenizer):
        # `t$snapshots` is one name, not `t` followed by a `$` parameter.
        VAR_SINGLE_TOKENS = {*Spark.Tokenizer.VAR_SINGLE_TOKENS, "$"}
        # CALL gets a real parser instead of being swallowed as an opaque command (T-SQL EXEC).
        KEYWORDS = {**Spark.Tokenizer.KEYWORDS, "CALL": TokenType.EXECUTE}
        COMMANDS = Spark.Tokenizer.COMMANDS - {TokenType.EXECUTE}

    class Parser(Spark.Parser):
        # Spark 4's variant path after a column: `v:a.b[0]`, `v:['key']`.
        COLON_IS_VARIANT_EXTRACT = True

        STATEMENT_PARSERS = {
            **Spark.Parser.STATEMENT_PARSERS,
            TokenType.EXECUTE: lambda self: self._parse_call(),
            TokenType.REPLACE: lambda self: self._parse_replace(),
        }

        # Spark's temporalClause: FOR? (SYSTEM_VERSION | VERSION) AS OF version
        #                       | FOR? (SYSTEM_TIME | TIMESTAMP) AS OF timestamp
        VERSION_PHRASES = {
            ("FOR", "SYSTEM_VERSION", "AS", "OF"): "VERSION",
            ("FOR", "VERSION", "AS", "OF"): "VERSION",
            ("FOR", "SYSTEM_TIME", "AS", "OF"): "TIMESTAMP",
            ("FOR", "TIMESTAMP", "AS", "OF"): "TIMESTAMP",
            ("SYSTEM_VERSION", "AS", "OF"): "VERSION",
            ("VERSION", "AS", "OF"): "VERSION",
            ("SYSTEM_TIME", "AS", "OF"): "TIMESTAMP",
            ("TIMESTAMP", "AS", "OF"): "TIMESTAMP",
        }

        def raise_error(self, message: str, token: Token | None = None) -> None:
            # At the end of the input sqlglot blames the last token; blame the end instead
            # (an empty token after it), so that the message can say "end of input".
            if not token and not self._curr and self._prev:
                end = len(self.sql)
                line, col = self._prev.line, self._prev.col + 1
                token = Token(TokenType.UNKNOWN, "", line=line, col=col, start=end, end=end - 1)
            super().raise_error(message, token)  # type: ignore[arg-type]

        def _warn_unsupported(self) -> None:
            # Command fallbacks are judged by sql_ext.syntax.parse (an error for Paimon syntax,
            # a verbatim pass-through otherwise), so sqlglot's warning is only noise.
            return None

        def _parse_version(self) -> exp.Version | None:
            phrase = next((p for p in self.VERSION_PHRASES if self._match_text_seq(*p)), None)
            if phrase is None:
                return None
            kind = self.VERSION_PHRASES[phrase]
            expression = self._spanned(self._parse_bitwise)
            if expression is None:
                self.raise_error(f"Expected a value after {' '.join(phrase)}")
            version = self.expression(exp.Version(this=kind, kind="AS OF", expression=expression))
            version.meta[END] = self._prev.end + 1
            return version

        def _parse_table_sample(self, as_modifier: bool = False) -> exp.TableSample | None:
            sample = super()._parse_table_sample(as_modifier)
            if sample is not None:
                sample.meta[END] = self._prev.end + 1
            return sample

        def _parse_with(self, skip_with_token: bool = False) -> exp.With | None:
            return self._spanned(
                lambda: super(PaimonSpark.Parser, self)._parse_with(skip_with_token)
            )

        def _parse_ddl_select(self) -> exp.Expr | None:
            return self._spanned(super()._parse_ddl_select)

        def _parse_derived_table_values(
            self, allow_value_synonym: bool = False
        ) -> exp.Values | None:
            return self._spanned(
                lambda: super(PaimonSpark.Parser, self)._parse_derived_table_values(
                    allow_value_synonym
                )
            )

        def _spanned(self, parse: Callable[[], _E | None]) -> _E | None:
            first = self._curr
            node = parse()
            if node is not None and first is not None and self._prev is not None:
                node.meta[SPAN] = (first.start, self._prev.end + 1)
            return node

        def _parse_replace(self) -> exp.Expr:
            """`REPLACE TABLE ...` as sqlglot's CREATE OR REPLACE; anything else is opaque."""
            start = self._prev
            if not self._match(TokenType.TABLE, advance=False):
                return self._parse_as_command(start)
            create = self._parse_create()
            if isinstance(create, exp.Create):
                create.meta[REPLACE_ONLY] = True
            return create

        def _parse_call(self) -> exp.Expr:
            start = self._prev
            if start.text.upper() != "CALL":
                # Spark's EXECUTE IMMEDIATE: not ours, keep it opaque.
                return self._parse_as_command(start)

            name = self._parse_call_name()
            args: list[exp.Expr] = []
            if not self._match(TokenType.L_PAREN):
                self.raise_error("Expecting ( after the procedure name")
            elif not self._match(TokenType.R_PAREN):
                while True:
                    arg = self._parse_call_argument(len(args) + 1)
                    if arg is None:
                        break
                    args.append(arg)
                    if not self._match(TokenType.COMMA):
                        self._match_r_paren()
                        break
            return self.expression(Call(this=name, expressions=args), start)

        def _parse_call_name(self) -> exp.Expr:
            parts: list[exp.Identifier] = []
            while self._curr and (
                self._curr.token_type == TokenType.IDENTIFIER or _is_word(self._curr)
            ):
                token = self._curr
                self._advance()
                quoted = token.token_type == TokenType.IDENTIFIER
                parts.append(self.expression(exp.Identifier(this=token.text, quoted=quoted)))
                if not self._match(TokenType.DOT):
                    break
            if not parts:
                self.raise_error("Expected a procedure name after CALL")
                return exp.Identifier(this="")
            return parts[0] if len(parts) == 1 else exp.Dot.build(parts)

        def _parse_call_argument(self, position: int) -> exp.Expr | None:
            curr = self._curr
            if self._next.token_type == TokenType.FARROW and (
                curr.token_type == TokenType.IDENTIFIER or _is_word(curr)
            ):
                self._advance(2)
                name = exp.Identifier(
                    this=curr.text, quoted=curr.token_type == TokenType.IDENTIFIER
                )
                value = self._parse_call_value(f"'{curr.text}'")
                return value and self.expression(NamedArg(this=name, expression=value), curr)
            value = self._parse_call_value(f"#{position}")
            # Positions let the caller point at the argument it rejects.
            return value and value.update_positions(curr)

        def _parse_call_value(self, label: str) -> exp.Expr | None:
            value = self._parse_call_item(allow_map=True)
            if value is None:
                self.raise_error(f"Expected a value for argument {label}")
            return value

        def _parse_call_item(self, allow_map: bool) -> exp.Expr | None:
            """A constant, or else any expression, kept so that the caller can name what is wrong."""
            index = self._index
            value = self._parse_call_constant(allow_map)
            if value is not None and self._curr.token_type in (TokenType.COMMA, TokenType.R_PAREN):
                return value
            self._retreat(index)
            return self._parse_disjunction()

        def _parse_call_constant(self, allow_map: bool) -> exp.Expr | None:
            """One `constant` of Paimon's CALL grammar, or None (position unchanged)."""
            curr, token_type = self._curr, self._curr.token_type
            if token_type == TokenType.STRING:
                # Adjacent literals concatenate, as in Spark: 'it''s' is 'its'.
                texts = []
                while self._match(TokenType.STRING):
                    texts.append(self._prev.text)
                return exp.Literal.string("".join(texts))
            if token_type in (TokenType.TRUE, TokenType.FALSE, TokenType.NULL):
                self._advance()
                if token_type == TokenType.NULL:
                    return exp.Null()
                return exp.Boolean(this=token_type == TokenType.TRUE)
            if token_type == TokenType.HEX_STRING:
                self._advance()
                return exp.HexString(this=curr.text)
            if token_type in (TokenType.DASH, TokenType.NUMBER, TokenType.DOT):
                return self._parse_call_number()
            if (
                allow_map
                and curr.text.upper() == "MAP"
                and self._next.token_type == TokenType.L_PAREN
            ):
                return self._parse_call_map()
            if _is_word(curr) and self._next.token_type == TokenType.STRING:
                self._advance(2)
                literal = exp.Literal.string(self._prev.text)
                return TypedLiteral(this=curr.text.upper(), expression=literal)
            return None

        def _parse_call_number(self) -> exp.Expr | None:
            index = self._index
            negative = self._match(TokenType.DASH)
            if self._match(TokenType.NUMBER):
                number = self._prev
                text = number.text
            elif self._match_pair(TokenType.DOT, TokenType.NUMBER):
                number = self._prev
                text = "." + number.text
            else:
                self._retreat(index)
                return None
            # The tokenizer rewrites `10L` as NUMBER `::` BIGINT, all at the number's offset.
            if (
                self._curr.token_type == TokenType.DCOLON
                and self._curr.start == number.start
                and self._next.text.upper() in NUMBER_SUFFIXES
            ):
                text += self._next.text.upper()
                self._advance(2)
            literal: exp.Expr = exp.Literal.number(text)
            return exp.Neg(this=literal) if negative else literal

        def _parse_call_map(self) -> exp.Expr:
            self._advance(2)
            items: list[exp.Expr] = []
            if not self._match(TokenType.R_PAREN):
                while True:
                    item = self._parse_call_item(allow_map=False)
                    if item is None:
                        self.raise_error("Expected a MAP key or value")
                        break
                    items.append(item)
                    if not self._match(TokenType.COMMA):
                        self._match_r_paren()
                        break
            if len(items) % 2:
                self.raise_error("MAP(...) needs an even number of arguments (key, value, ...)")
            return exp.VarMap(
                keys=exp.Array(expressions=items[0::2]),
                values=exp.Array(expressions=items[1::2]),
            )

    class Generator(Spark.Generator):
        TRANSFORMS = {
            **Spark.Generator.TRANSFORMS,
            Call: _call_sql,
            NamedArg: _named_arg_sql,
            TypedLiteral: _typed_literal_sql,
            exp.ParseJSON: _parse_json_sql,
            exp.JSONExtract: _json_extract_sql,
        }
