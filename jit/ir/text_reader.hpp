// A character cursor over IR text for the parser: whitespace and `//` comments, identifiers,
// numbers, quoted strings, and errors that name "file:line:col".
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "jit/ir/ir.hpp"

namespace tessera::ir {

class TextReader {
 public:
  TextReader(std::string_view text, std::string_view file) : text_(text), file_(file) {}

  std::size_t offset() const { return pos_; }
  void reset(std::size_t offset) { pos_ = offset; }
  SourceLoc loc_at(std::size_t offset) const;
  [[noreturn]] void fail(const std::string& message) const { fail_at(pos_, message); }
  [[noreturn]] void fail_at(std::size_t offset, const std::string& message) const;

  void skip_space();         // spaces, newlines and // comments
  void skip_inline_space();  // spaces and tabs only: the rest of this line
  bool at_end() { skip_space(); return pos_ >= text_.size(); }
  char peek() { skip_space(); return raw_peek(); }
  char raw_peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  bool try_char(char c);               // after skipping space
  void expect_char(char c);
  bool try_keyword(std::string_view w);  // a whole identifier equal to w
  void expect_keyword(std::string_view w);
  bool peek_identifier();
  std::string identifier(std::string_view what = "an identifier");
  std::string value_name();            // `%name`, returns name
  std::int64_t integer();
  Attr number();                       // int64 unless it has '.', an exponent, or is inf/nan
  std::string quoted_string();
  std::string peek_token() const;      // for messages: the text at the cursor, up to a space

 private:
  std::string_view text_;
  std::string file_;
  std::size_t pos_ = 0;
};

}  // namespace tessera::ir
