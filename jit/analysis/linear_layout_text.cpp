// The text form of linear layouts (see linear_layout.hpp): to_string and its parser.
#include <cctype>

#include "jit/analysis/linear_layout.hpp"
#include "tessera/error.hpp"

namespace tessera::analysis {
using I = std::int64_t;

namespace {
std::string basis_text(const LinearLayout::Basis& b) {
  std::string s = "[";
  for (std::size_t i = 0; i < b.size(); ++i) s += (i ? "," : "") + std::to_string(b[i]);
  return s + "]";
}
}  // namespace

std::string to_string(const LinearLayout& l) {
  std::string s = "{";
  for (std::size_t i = 0; i < l.in_dims().size(); ++i) {
    const auto& d = l.in_dims()[i];
    s += (i ? ", " : "") + d.name + "=[";
    for (std::size_t b = 0; b < d.bases.size(); ++b) s += (b ? "," : "") + basis_text(d.bases[b]);
    s += "]";
  }
  s += "} -> [";
  for (std::size_t j = 0; j < l.out_dims().size(); ++j)
    s += (j ? ", " : "") + l.out_dims()[j].name + "=" + std::to_string(l.out_dims()[j].size);
  return s + "]";
}

namespace {

class Parser {
 public:
  explicit Parser(std::string_view t) : t_(t) {}

  LinearLayout layout() {
    std::vector<LinearLayout::InDim> ins;
    std::vector<LinearLayout::OutDim> outs;
    expect('{', "'{' opening the input dims");
    if (!accept('}')) {
      do {
        LinearLayout::InDim d{name("an input dim name"), {}};
        expect('=', "'=' after input dim '" + d.name + "'");
        expect('[', "'[' opening the bases of '" + d.name + "'");
        if (!accept(']')) {
          do d.bases.push_back(basis(d.name));
          while (accept(','));
          expect(']', "',' or ']' after a basis of '" + d.name + "'");
        }
        ins.push_back(std::move(d));
      } while (accept(','));
      expect('}', "',' or '}' after an input dim");
    }
    expect('-', "'->' after the input dims");
    expect('>', "'->' after the input dims");
    expect('[', "'[' opening the output dims");
    if (!accept(']')) {
      do {
        LinearLayout::OutDim d{name("an output dim name"), 0};
        expect('=', "'=' after output dim '" + d.name + "'");
        d.size = number("the size of output dim '" + d.name + "'");
        outs.push_back(std::move(d));
      } while (accept(','));
      expect(']', "',' or ']' after an output dim");
    }
    skip();
    if (p_ != t_.size()) fail("unexpected text after the layout");
    // Well-formed text can still describe no layout (a basis of the wrong length, a size that is
    // not a power of two): the constructor's check says which, as the text's problem.
    try {
      return LinearLayout(std::move(ins), std::move(outs));
    } catch (const InternalError& e) {
      std::string_view why = e.what();
      if (why.starts_with("linear layout: ")) why.remove_prefix(15);
      throw ProgramError("linear layout text '" + std::string(t_) + "': " + std::string(why));
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw ProgramError("linear layout text '" + std::string(t_) + "' at offset " + std::to_string(p_) + ": " + what);
  }
  void skip() {
    while (p_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[p_]))) ++p_;
  }
  bool accept(char c) {
    skip();
    if (p_ < t_.size() && t_[p_] == c) {
      ++p_;
      return true;
    }
    return false;
  }
  void expect(char c, const std::string& what) {
    if (!accept(c)) fail("expected " + what);
  }
  std::string name(const std::string& what) {
    skip();
    std::size_t b = p_;
    while (p_ < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[p_])) || t_[p_] == '_')) ++p_;
    if (b == p_ || std::isdigit(static_cast<unsigned char>(t_[b]))) {
      p_ = b;
      fail("expected " + what);
    }
    return std::string(t_.substr(b, p_ - b));
  }
  I number(const std::string& what) {
    skip();
    std::size_t b = p_;
    I v = 0;
    while (p_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[p_]))) {
      if (v > (I{1} << 40)) fail(what + " is too large");
      v = v * 10 + (t_[p_++] - '0');
    }
    if (b == p_) fail("expected " + what + " (a non-negative integer)");
    return v;
  }
  LinearLayout::Basis basis(const std::string& dim) {
    LinearLayout::Basis b;
    expect('[', "'[' opening a basis of '" + dim + "'");
    if (accept(']')) return b;
    do b.push_back(number("a coordinate of a basis of '" + dim + "'"));
    while (accept(','));
    expect(']', "',' or ']' in a basis of '" + dim + "'");
    return b;
  }

  std::string_view t_;
  std::size_t p_ = 0;
};

}  // namespace

LinearLayout parse_linear_layout(std::string_view text) { return Parser(text).layout(); }

}  // namespace tessera::analysis
