#include "jit/ir/printer.hpp"

#include <fmt/format.h>

#include <cmath>
#include <unordered_map>
#include <unordered_set>

namespace tessera::ir {

bool is_identifier(std::string_view s) {
  if (s.empty()) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!alpha(s[0])) return false;
  for (char c : s)
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  return true;
}

std::string format_double(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  std::string s = fmt::format("{}", d);  // shortest text that reads back to the same bits
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";  // keep it a float when reparsed
  return s;
}

std::string quote_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u >= 0x7f) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string print_attr(const Attr& a) {
  if (auto* i = std::get_if<std::int64_t>(&a)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&a)) return format_double(*d);
  if (auto* s = std::get_if<std::string>(&a)) return quote_string(*s);
  return fmt::format("[{}]", fmt::join(std::get<std::vector<std::int64_t>>(a), ", "));
}

namespace {

// Names every value of a kernel deterministically (definition order, never pointer order).
class Namer {
 public:
  explicit Namer(const Block* entry) {
    if (!entry) return;
    name_kernel_args(*entry);
    number_ops(*entry);
  }

  std::string name(const Value* v) const {
    if (!v) return "%<null>";
    auto it = names_.find(v);
    return it == names_.end() ? "%<unknown>" : it->second;
  }

 private:
  void name_kernel_args(const Block& entry) {
    std::unordered_map<std::string, int> count;
    for (const auto& a : entry.args) ++count[a->name_hint];
    std::unordered_set<std::string> taken;
    for (const auto& a : entry.args)
      if (is_identifier(a->name_hint) && count[a->name_hint] == 1) taken.insert(a->name_hint);
    for (const auto& a : entry.args) {
      std::string n = a->name_hint;
      if (!is_identifier(n) || count[n] != 1) {
        n = fmt::format("arg{}", a->index);
        while (taken.count(n)) n += '_';  // a unique hint may already be spelled argN
        taken.insert(n);
      }
      names_[a.get()] = "%" + n;
    }
  }

  void number_ops(const Block& b) {
    for (const auto& op : b.ops) {
      for (const auto& r : op->results) names_[r.get()] = fmt::format("%{}", next_++);
      for (const auto& region : op->regions) {
        for (const auto& a : region->block->args) names_[a.get()] = fmt::format("%{}", next_++);
        number_ops(*region->block);
      }
    }
  }

  std::unordered_map<const Value*, std::string> names_;
  int next_ = 0;
};

std::string join_names(const Namer& n, const std::vector<Value*>& vs) {
  std::string s;
  for (std::size_t i = 0; i < vs.size(); ++i) s += (i ? ", " : "") + n.name(vs[i]);
  return s;
}

std::string attr_dict(const std::map<std::string, Attr>& attrs) {
  if (attrs.empty()) return "";
  std::string s = " {";
  bool first = true;
  for (const auto& [k, v] : attrs) {
    s += (first ? "" : ", ") + k + " = " + print_attr(v);
    first = false;
  }
  return s + "}";
}

std::string loc_text(const SourceLoc& loc) {
  return fmt::format("loc({}:{}:{})", quote_string(loc.file), loc.line, loc.column);
}

// `%a, %b = name %x, %y {attrs} : t1, t2` without regions or location.
std::string op_header(const Namer& n, const Op& op) {
  std::string s;
  for (std::size_t i = 0; i < op.results.size(); ++i) s += (i ? ", " : "") + n.name(op.results[i].get());
  if (!op.results.empty()) s += " = ";
  s += op.name();
  if (!op.operands.empty()) s += " " + join_names(n, op.operands);
  s += attr_dict(op.attrs);
  for (std::size_t i = 0; i < op.results.size(); ++i) s += (i ? ", " : " : ") + to_string(op.results[i]->type);
  return s;
}

class Printer {
 public:
  Printer(const Namer& n, const PrintOptions& o) : names_(n), options_(o) {}

  void block_body(const Block& b, int indent) {
    for (const auto& op : b.ops) print_op_lines(*op, indent);
  }

  std::string take() { return std::move(out_); }
  std::string& out() { return out_; }

 private:
  void print_op_lines(const Op& op, int indent) {
    std::string pad(indent * 2, ' ');
    out_ += pad + op_header(names_, op);
    for (std::size_t i = 0; i < op.regions.size(); ++i) {
      out_ += i == 0 ? " {\n" : " else {\n";
      const Block& rb = *op.regions[i]->block;
      if (!rb.args.empty()) out_ += pad + "^bb(" + block_args(rb) + "):\n";
      block_body(rb, indent + 1);
      out_ += pad + "}";
    }
    if (options_.locations && op.loc.known()) out_ += "  " + loc_text(op.loc);
    out_ += "\n";
  }

  std::string block_args(const Block& b) {
    std::string s;
    for (std::size_t i = 0; i < b.args.size(); ++i)
      s += (i ? ", " : "") + names_.name(b.args[i].get()) + ": " + to_string(b.args[i]->type);
    return s;
  }

  const Namer& names_;
  const PrintOptions& options_;
  std::string out_;
};

std::string arg_facts_text(const ArgFacts& f) {
  std::vector<std::string> parts;
  if (f.divisibility != 1) parts.push_back(fmt::format("divisibility = {}", f.divisibility));
  if (f.equal_to_one) parts.push_back("equal_to_one");
  return parts.empty() ? "" : fmt::format(" {{{}}}", fmt::join(parts, ", "));
}

// The entry block of the kernel that holds `op` (climbing region -> op -> block).
const Block* root_block(const Op& op) {
  const Block* b = op.parent;
  while (b && b->parent && b->parent->parent && b->parent->parent->parent) b = b->parent->parent->parent;
  return b;
}

}  // namespace

std::string print(const Module& m, const PrintOptions& options) {
  Namer names(&m.entry());
  Printer p(names, options);
  std::string& out = p.out();
  out += "kernel @" + (is_identifier(m.name) ? m.name : quote_string(m.name)) + "(";
  const Block& entry = m.entry();
  for (std::size_t i = 0; i < entry.args.size(); ++i) {
    const Value& a = *entry.args[i];
    out += (i ? ", " : "") + names.name(&a) + ": " + to_string(a.type);
    if (i < m.arg_facts.size()) out += arg_facts_text(m.arg_facts[i]);
  }
  out += fmt::format(") num_warps = {}", m.num_warps);
  if (m.num_stages > 1) out += fmt::format(" num_stages = {}", m.num_stages);
  out += " {\n";
  p.block_body(entry, 1);
  out += "}\n";
  return p.take();
}

std::string print_op(const Op& op) {
  Namer names(root_block(op));
  std::string s = op_header(names, op);
  for (std::size_t i = 0; i < op.regions.size(); ++i) s += i == 0 ? " {...}" : " else {...}";
  return s;
}

}  // namespace tessera::ir
