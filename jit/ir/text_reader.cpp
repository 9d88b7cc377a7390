#include "jit/ir/text_reader.hpp"

#include <fmt/format.h>

#include <charconv>
#include <limits>

#include "tessera/error.hpp"

namespace tessera::ir {
namespace {
bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }
}  // namespace

SourceLoc TextReader::loc_at(std::size_t offset) const {
  SourceLoc loc{file_, 1, 1};
  for (std::size_t i = 0; i < offset && i < text_.size(); ++i) {
    if (text_[i] == '\n') {
      ++loc.line;
      loc.column = 1;
    } else {
      ++loc.column;
    }
  }
  return loc;
}

void TextReader::fail_at(std::size_t offset, const std::string& message) const {
  throw ProgramError(fmt::format("{}: {}", loc_at(offset).str(), message));
}

std::string TextReader::peek_token() const {
  if (pos_ >= text_.size()) return "end of input";
  std::size_t end = pos_;
  while (end < text_.size() && end - pos_ < 24 && text_[end] != ' ' && text_[end] != '\n') ++end;
  return fmt::format("'{}'", text_.substr(pos_, std::max<std::size_t>(end - pos_, 1)));
}

void TextReader::skip_space() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    } else {
      return;
    }
  }
}

void TextReader::skip_inline_space() {
  while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
}

bool TextReader::try_char(char c) {
  if (peek() != c) return false;
  ++pos_;
  return true;
}

void TextReader::expect_char(char c) {
  if (!try_char(c)) fail(fmt::format("expected '{}', found {}", c, peek_token()));
}

bool TextReader::peek_identifier() { return is_ident_start(peek()); }

bool TextReader::try_keyword(std::string_view w) {
  skip_space();
  if (text_.substr(pos_, w.size()) != w) return false;
  std::size_t end = pos_ + w.size();
  if (end < text_.size() && is_ident_char(text_[end])) return false;
  pos_ = end;
  return true;
}

void TextReader::expect_keyword(std::string_view w) {
  if (!try_keyword(w)) fail(fmt::format("expected '{}', found {}", w, peek_token()));
}

std::string TextReader::identifier(std::string_view what) {
  if (!peek_identifier()) fail(fmt::format("expected {}, found {}", what, peek_token()));
  std::size_t start = pos_;
  while (pos_ < text_.size() && is_ident_char(text_[pos_])) ++pos_;
  return std::string(text_.substr(start, pos_ - start));
}

std::string TextReader::value_name() {
  expect_char('%');
  std::size_t start = pos_;
  while (pos_ < text_.size() && is_ident_char(text_[pos_])) ++pos_;
  if (pos_ == start) fail("expected a value name after '%'");
  return std::string(text_.substr(start, pos_ - start));
}

std::int64_t TextReader::integer() {
  Attr a = number();
  if (auto* i = std::get_if<std::int64_t>(&a)) return *i;
  fail("expected an integer");
}

Attr TextReader::number() {
  skip_space();
  std::size_t start = pos_;
  bool negative = raw_peek() == '-';
  if (negative) ++pos_;
  if (try_keyword("inf")) return negative ? -std::numeric_limits<double>::infinity()
                                          : std::numeric_limits<double>::infinity();
  if (!negative && try_keyword("nan")) return std::numeric_limits<double>::quiet_NaN();
  if (!is_digit(raw_peek())) fail_at(start, fmt::format("expected a number, found {}", peek_token()));
  bool is_float = false;
  while (is_digit(raw_peek())) ++pos_;
  if (raw_peek() == '.') {
    is_float = true;
    ++pos_;
    while (is_digit(raw_peek())) ++pos_;
  }
  if (raw_peek() == 'e' || raw_peek() == 'E') {
    is_float = true;
    ++pos_;
    if (raw_peek() == '+' || raw_peek() == '-') ++pos_;
    if (!is_digit(raw_peek())) fail("expected digits in the exponent");
    while (is_digit(raw_peek())) ++pos_;
  }
  const char* first = text_.data() + start;
  const char* last = text_.data() + pos_;
  if (is_float) {
    double d = 0;
    auto [p, ec] = std::from_chars(first, last, d);
    if (ec != std::errc() || p != last) fail_at(start, "malformed floating-point number");
    return d;
  }
  std::int64_t i = 0;
  auto [p, ec] = std::from_chars(first, last, i);
  if (ec != std::errc() || p != last) fail_at(start, "integer out of the range of int64");
  return i;
}

std::string TextReader::quoted_string() {
  expect_char('"');
  std::string s;
  while (true) {
    if (pos_ >= text_.size() || text_[pos_] == '\n') fail("unterminated string");
    char c = text_[pos_++];
    if (c == '"') return s;
    if (c != '\\') {
      s += c;
      continue;
    }
    char e = raw_peek();
    ++pos_;
    if (e == 'n') {
      s += '\n';
    } else if (e == 't') {
      s += '\t';
    } else if (e == '"' || e == '\\') {
      s += e;
    } else if (e == 'x' && pos_ + 2 <= text_.size()) {
      unsigned v = 0;
      auto [p, ec] = std::from_chars(text_.data() + pos_, text_.data() + pos_ + 2, v, 16);
      if (ec != std::errc() || p != text_.data() + pos_ + 2) fail("bad \\x escape in string");
      s += static_cast<char>(v);
      pos_ += 2;
    } else {
      fail("unknown escape in string");
    }
  }
}

}  // namespace tessera::ir
