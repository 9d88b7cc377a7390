#include "jit/ir/parser.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <unordered_map>

#include "jit/ir/text_reader.hpp"

namespace tessera::ir {
namespace {

class Parser {
 public:
  Parser(std::string_view text, std::string_view file) : r_(text, file) {}

  std::unique_ptr<Module> module() {
    auto m = std::make_unique<Module>();
    r_.expect_keyword("kernel");
    r_.expect_char('@');
    m->name = r_.peek() == '"' ? r_.quoted_string() : r_.identifier("a kernel name");
    scopes_.emplace_back();
    r_.expect_char('(');
    if (!r_.try_char(')')) {
      do kernel_arg(*m);
      while (r_.try_char(','));
      r_.expect_char(')');
    }
    if (r_.try_keyword("num_warps")) {
      r_.expect_char('=');
      m->num_warps = small_int("num_warps");
    }
    if (r_.try_keyword("num_stages")) {
      r_.expect_char('=');
      m->num_stages = small_int("num_stages");
    }
    r_.expect_char('{');
    block_body(m->entry());
    r_.expect_char('}');
    if (!r_.at_end()) r_.fail(fmt::format("expected end of input after the kernel, found {}", r_.peek_token()));
    return m;
  }

 private:
  void kernel_arg(Module& m) {
    Block& entry = m.entry();
    std::size_t at = here();
    std::string name = r_.value_name();
    r_.expect_char(':');
    Type t = type();
    // %argN is what the printer invents for an argument without a usable hint: keep it hintless.
    bool invented = name == fmt::format("arg{}", entry.args.size());
    Value* v = entry.add_arg(t, invented ? std::string() : name);
    define(name, v, at);
    m.arg_facts.push_back(r_.peek() == '{' ? arg_facts() : ArgFacts{});
  }

  ArgFacts arg_facts() {
    ArgFacts f;
    r_.expect_char('{');
    do {
      std::size_t at = here();
      std::string key = r_.identifier("an argument fact");
      if (key == "divisibility") {
        r_.expect_char('=');
        f.divisibility = r_.integer();
      } else if (key == "equal_to_one") {
        f.equal_to_one = true;
      } else {
        r_.fail_at(at, fmt::format("unknown argument fact '{}' (expected divisibility or equal_to_one)", key));
      }
    } while (r_.try_char(','));
    r_.expect_char('}');
    return f;
  }

  // Ops up to (not including) the closing '}'.
  void block_body(Block& b) {
    Builder builder(&b);
    while (r_.peek() != '}') {
      if (r_.at_end()) r_.fail("unexpected end of input: missing '}'");
      op(builder);
    }
  }

  void op(Builder& builder) {
    std::size_t start = here();
    std::vector<std::pair<std::string, std::size_t>> result_names;
    if (r_.peek() == '%') {
      do {
        std::size_t at = here();
        result_names.emplace_back(r_.value_name(), at);
      } while (r_.try_char(','));
      r_.expect_char('=');
    }
    std::size_t name_at = here();
    std::string name = r_.identifier("an op name");
    const OpInfo* info = op_info_by_name(name);
    if (!info) r_.fail_at(name_at, fmt::format("unknown op '{}'", name));

    std::vector<Value*> operands;
    r_.skip_inline_space();  // operands start on the op's own line
    if (r_.raw_peek() == '%') {
      do operands.push_back(use());
      while (r_.try_char(','));
    }
    std::map<std::string, Attr> attrs;
    if (looks_like_attr_dict()) attrs = attr_dict();
    std::vector<Type> types;
    if (r_.try_char(':')) {
      do types.push_back(type());
      while (r_.try_char(','));
    }
    if (types.size() != result_names.size())
      r_.fail_at(start, fmt::format("'{}' names {} result(s) but lists {} result type(s)", name,
                                    result_names.size(), types.size()));

    // Recursion: op -> region -> block_body -> op. The depth bound keeps the stack of this parser
    // (and of the verifier, printer and passes that later walk the module) small.
    if (info->num_regions > 0 && static_cast<int>(scopes_.size()) > kMaxRegionDepth)  // [0]: the body
      r_.fail_at(start, fmt::format("regions nested more than {} deep", kMaxRegionDepth));
    Op* op = builder.create(info->kind, std::move(operands), std::move(types), std::move(attrs),
                            info->num_regions);
    for (int i = 0; i < info->num_regions; ++i) {
      if (i > 0) r_.expect_keyword("else");
      r_.expect_char('{');
      region(*op->regions[i]->block);
      r_.expect_char('}');
    }
    if (r_.try_keyword("loc")) op->loc = loc();
    // Results are visible only after the op (and its regions): the verifier's dominance rule.
    for (std::size_t i = 0; i < result_names.size(); ++i)
      define(result_names[i].first, op->result(static_cast<int>(i)), result_names[i].second);
  }

  void region(Block& b) {
    scopes_.emplace_back();
    if (r_.try_char('^')) {
      r_.identifier("a block label");
      r_.expect_char('(');
      if (!r_.try_char(')')) {
        do {
          std::size_t at = here();
          std::string name = r_.value_name();
          r_.expect_char(':');
          define(name, b.add_arg(type()), at);
        } while (r_.try_char(','));
        r_.expect_char(')');
      }
      r_.expect_char(':');
    }
    block_body(b);
    scopes_.pop_back();
  }

  // `{` starts an attribute dictionary when an `name =` follows, and a region otherwise.
  bool looks_like_attr_dict() {
    std::size_t save = r_.offset();
    bool dict = false;
    if (r_.try_char('{') && r_.peek_identifier()) {
      r_.identifier();
      dict = r_.peek() == '=';
    }
    r_.reset(save);
    return dict;
  }

  std::map<std::string, Attr> attr_dict() {
    std::map<std::string, Attr> attrs;
    r_.expect_char('{');
    do {
      std::size_t at = here();
      std::string key = r_.identifier("an attribute name");
      r_.expect_char('=');
      if (!attrs.emplace(key, attr_value()).second) r_.fail_at(at, fmt::format("duplicate attribute '{}'", key));
    } while (r_.try_char(','));
    r_.expect_char('}');
    return attrs;
  }

  Attr attr_value() {
    char c = r_.peek();
    if (c == '"') return r_.quoted_string();
    if (c != '[') return r_.number();
    r_.expect_char('[');
    std::vector<std::int64_t> list;
    if (!r_.try_char(']')) {
      do list.push_back(r_.integer());
      while (r_.try_char(','));
      r_.expect_char(']');
    }
    return list;
  }

  SourceLoc loc() {
    SourceLoc l;
    r_.expect_char('(');
    l.file = r_.quoted_string();
    r_.expect_char(':');
    l.line = small_int("a line number");
    r_.expect_char(':');
    l.column = small_int("a column number");
    r_.expect_char(')');
    return l;
  }

  Type type() {
    std::size_t start = here();
    if (r_.try_char('!')) return shared_type(start);
    if (!r_.try_char('<')) return element_type();
    std::vector<std::int64_t> shape = dims();
    if (shape.empty()) r_.fail("a tile type needs at least one dimension, as in <128xf32>");
    Type t = element_type().with_shape(std::move(shape));
    // Triton's tile limits, at the type's text (the verifier checks them again for built IR).
    if (auto p = tile_shape_problem(t.shape, to_string(t)); !p.empty()) r_.fail_at(start, p);
    if (r_.try_char(',')) t.layout = layout();
    r_.expect_char('>');
    return t;
  }

  // `128x64x` before an element type.
  std::vector<std::int64_t> dims() {
    std::vector<std::int64_t> shape;
    while (r_.peek() >= '0' && r_.peek() <= '9') {
      shape.push_back(r_.integer());
      if (r_.raw_peek() != 'x') r_.fail("expected 'x' after a dimension");
      r_.reset(r_.offset() + 1);
    }
    return shape;
  }

  // `!smem<3x128x64xbf16, #nvmma<128>>` (ops.def, "Shared memory"), after the '!'.
  Type shared_type(std::size_t start) {
    r_.expect_keyword("smem");
    r_.expect_char('<');
    std::vector<std::int64_t> shape = dims();
    if (shape.empty()) r_.fail("a shared buffer type needs at least one dimension, as in !smem<64x32xf16>");
    Type t = element_type();  // a pointer element is refused below, and named with its pointee
    t.shape = std::move(shape);
    t.shared = true;
    if (r_.try_char(',')) t.encoding = shared_encoding();
    r_.expect_char('>');
    if (auto p = shared_type_problem(t); !p.empty()) r_.fail_at(start, p);
    return t;
  }

  SharedEncoding shared_encoding() {
    r_.expect_char('#');
    SharedEncoding e;
    if (r_.try_keyword("transposed")) {  // row-major, read the other way round (smem_trans)
      e.transposed = true;
      return e;
    }
    if (r_.try_keyword("padded")) {
      e.kind = SharedEncoding::Kind::Padded;
      r_.expect_char('<');
      e.bytes = small_int("a padding in bytes");
    } else {
      r_.expect_keyword("nvmma");
      e.kind = SharedEncoding::Kind::Nvmma;
      r_.expect_char('<');
      e.bytes = small_int("a swizzle width in bytes");
    }
    if (r_.try_char(',')) {
      r_.expect_keyword("transposed");
      e.transposed = true;
    }
    r_.expect_char('>');
    return e;
  }

  Type element_type() {
    std::size_t at = here();
    std::string name = r_.identifier("a type");
    if (name == "ptr") {
      r_.expect_char('<');
      Type p = Type::pointer(dtype(r_.identifier("a pointee type"), at));
      r_.expect_char('>');
      return p;
    }
    return Type::scalar(dtype(name, at));
  }

  DType dtype(const std::string& name, std::size_t at) {
    auto d = dtype_from_name(name);
    if (!d) r_.fail_at(at, fmt::format("unknown type '{}'", name));
    return *d;
  }

  Layout layout() {
    r_.expect_char('#');
    Layout l;
    if (r_.try_keyword("slice")) {
      r_.expect_char('<');
      l.slice_dim = small_int("a slice dim");
      r_.expect_char(',');
      r_.expect_keyword("blocked");
      blocked_body(l);
      r_.expect_char('>');
      l.kind = Layout::Kind::Slice;
      return l;
    }
    r_.expect_keyword("blocked");
    blocked_body(l);
    l.kind = Layout::Kind::Blocked;
    return l;
  }

  void blocked_body(Layout& l) {
    r_.expect_char('<');
    std::vector<int>* lists[] = {&l.size_per_thread, &l.threads_per_warp, &l.warps_per_cta, &l.order};
    for (int i = 0; i < 4; ++i) {
      if (i > 0) r_.expect_char(',');
      r_.expect_char('[');
      if (!r_.try_char(']')) {
        do lists[i]->push_back(small_int("a layout entry"));
        while (r_.try_char(','));
        r_.expect_char(']');
      }
    }
    if (r_.try_char(',')) {  // the optional fifth list (types.hpp), printed only when not all 1
      r_.expect_keyword("lane_repeat");
      r_.expect_char('=');
      r_.expect_char('[');
      do l.lane_repeat.push_back(small_int("a lane_repeat entry"));
      while (r_.try_char(','));
      r_.expect_char(']');
      if (std::all_of(l.lane_repeat.begin(), l.lane_repeat.end(), [](int v) { return v == 1; })) l.lane_repeat.clear();
    }
    r_.expect_char('>');
  }

  Value* use() {
    std::size_t at = here();
    std::string name = r_.value_name();
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto found = it->find(name);
      if (found != it->end()) return found->second;
    }
    r_.fail_at(at, fmt::format("use of undefined value %{}", name));
  }

  void define(const std::string& name, Value* v, std::size_t at) {
    for (const auto& scope : scopes_)
      if (scope.count(name)) r_.fail_at(at, fmt::format("redefinition of value %{}", name));
    scopes_.back()[name] = v;
  }

  // An integer that an int field holds; a larger one would be truncated to some other value.
  int small_int(const char* what) {
    std::size_t at = here();
    std::int64_t v = r_.integer();
    if (v < INT_MIN || v > INT_MAX) r_.fail_at(at, fmt::format("{} {} is out of the range of int", what, v));
    return static_cast<int>(v);
  }

  // The position of the next token (for messages that point at it).
  std::size_t here() {
    r_.skip_space();
    return r_.offset();
  }

  TextReader r_;
  std::vector<std::unordered_map<std::string, Value*>> scopes_;
};

}  // namespace

std::unique_ptr<Module> parse_module(std::string_view text, std::string_view file_name) {
  return Parser(text, file_name).module();
}

}  // namespace tessera::ir
