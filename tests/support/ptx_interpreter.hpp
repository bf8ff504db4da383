// A small interpreter for the scalar device functions (.func) of the library's PTX module, so that
// machines without a GPU (CI) check their arithmetic bit for bit against the C++ twins. It runs one
// thread: registers as 64-bit patterns, .param buffers as bytes, labels, predicates, calls; and
// the instructions those functions use, with PTX's semantics (.rn rounding, fma fused, cvt's
// rounding modes, ordered comparisons, mul.hi, bfe, vector packs). Anything else, including
// every instruction that needs a warp, a block or memory (shfl, bar, ld.global, atom), throws:
// kernels are checked on the GPU (tests/gpu/ptx_backend_test.cpp).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace resample::test {

class ptx_interpreter {
 public:
  explicit ptx_interpreter(const std::string& module) { parse(module); }

  /// Runs .func `name` with its input parameters' values as bit patterns (a .f64 as its bits);
  /// returns the bytes of its return parameter.
  std::vector<std::uint8_t> call(const std::string& name, const std::vector<std::uint64_t>& args) const {
    const function& f = find(name);
    if (args.size() != f.params.size()) throw std::runtime_error(name + ": wrong number of arguments");
    std::map<std::string, std::vector<std::uint8_t>> params;
    for (std::size_t i = 0; i < args.size(); ++i) {
      std::vector<std::uint8_t> bytes(f.params[i].second);
      std::memcpy(bytes.data(), &args[i], bytes.size());
      params[f.params[i].first] = bytes;
    }
    params[f.result.first] = std::vector<std::uint8_t>(f.result.second, 0);
    execute(f, params);
    return params.at(f.result.first);
  }

  std::uint64_t call64(const std::string& name, const std::vector<std::uint64_t>& args) const {
    const auto r = call(name, args);
    std::uint64_t v = 0;
    std::memcpy(&v, r.data(), std::min<std::size_t>(8, r.size()));
    return v;
  }

 private:
  struct statement {
    std::string guard;  // predicate register, "" when none
    bool negated = false;
    std::string op;     // e.g. "fma.rn.f64"
    std::vector<std::string> operands;
    int line = 0;
  };
  struct function {
    std::pair<std::string, std::size_t> result;                  // name, bytes
    std::vector<std::pair<std::string, std::size_t>> params;     // in order
    std::vector<statement> body;
    std::map<std::string, std::size_t> labels;                   // label -> statement index
  };
  std::map<std::string, function> functions_;

  const function& find(const std::string& name) const {
    const auto f = functions_.find(name);
    if (f == functions_.end()) throw std::runtime_error("no .func " + name + " in the module");
    return f->second;
  }

  static std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return {};
    return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
  }

  // ".param .f64 x" -> {x, 8}; ".param .align 16 .b8 name[16]" -> {name, 16}
  static std::pair<std::string, std::size_t> param_decl(const std::string& decl) {
    std::istringstream in(decl);
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    if (words.empty()) throw std::runtime_error("empty parameter declaration");
    std::string name = words.back();
    std::size_t bytes = 0;
    if (const auto bracket = name.find('['); bracket != std::string::npos) {
      bytes = std::stoul(name.substr(bracket + 1));
      name = name.substr(0, bracket);
    } else {
      const std::string type = words[words.size() - 2];
      bytes = std::stoul(type.substr(2)) / 8;
    }
    return {name, bytes};
  }

  static std::vector<std::string> split_params(const std::string& list) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : list) {
      if (c == ',') {
        out.push_back(trim(cur));
        cur.clear();
      } else {
        cur += c;
      }
    }
    if (!trim(cur).empty()) out.push_back(trim(cur));
    return out;
  }

  void parse(const std::string& module) {
    // strip // comments, keep line numbers
    std::vector<std::string> lines;
    std::istringstream in(module);
    for (std::string l; std::getline(in, l);) lines.push_back(l.substr(0, l.find("//")));
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const std::string l = trim(lines[i]);
      if (l.rfind(".func", 0) != 0) continue;
      std::string header;  // up to the body's opening brace
      std::size_t j = i;
      for (; j < lines.size() && trim(lines[j]) != "{"; ++j) header += " " + lines[j];
      // .func (ret) name(params)
      const auto r0 = header.find('('), r1 = header.find(')', r0);
      const auto p0 = header.find('(', r1), p1 = header.rfind(')');
      function f;
      f.result = param_decl(header.substr(r0 + 1, r1 - r0 - 1));
      const std::string name = trim(header.substr(r1 + 1, p0 - r1 - 1));
      for (const auto& p : split_params(header.substr(p0 + 1, p1 - p0 - 1))) f.params.push_back(param_decl(p));
      int depth = 0;
      std::string text;
      std::size_t k = j;
      for (; k < lines.size(); ++k) {
        const std::string t = trim(lines[k]);
        if (t == "{") {
          ++depth;
          continue;
        }
        if (t == "}") {
          if (--depth == 0) break;
          continue;
        }
        text = t;
        if (text.empty()) continue;
        if (text.back() == ':') {  // label
          f.labels[text.substr(0, text.size() - 1)] = f.body.size();
          continue;
        }
        for (std::string s; !text.empty();) {  // statements end with ';' (one per line here, but be safe)
          const auto semi = text.find(';');
          s = trim(text.substr(0, semi));
          text = semi == std::string::npos ? "" : trim(text.substr(semi + 1));
          if (s.empty() || s[0] == '.') continue;  // declarations
          f.body.push_back(parse_statement(s, static_cast<int>(k + 1)));
        }
      }
      functions_[name] = f;
      i = k;
    }
  }

  static statement parse_statement(std::string s, int line) {
    statement st;
    st.line = line;
    if (s[0] == '@') {
      const auto space = s.find(' ');
      std::string g = s.substr(1, space - 1);
      if (g[0] == '!') {
        st.negated = true;
        g = g.substr(1);
      }
      st.guard = g;
      s = trim(s.substr(space + 1));
    }
    const auto space = s.find_first_of(" \t");
    st.op = s.substr(0, space);
    if (space == std::string::npos) return st;
    const std::string rest = s.substr(space + 1);
    std::string cur;
    int brace = 0;
    for (char c : rest) {
      if (c == '{') ++brace;
      if (c == '}') --brace;
      if (c == ',' && brace == 0) {
        st.operands.push_back(trim(cur));
        cur.clear();
      } else {
        cur += c;
      }
    }
    st.operands.push_back(trim(cur));
    return st;
  }

  using registers = std::map<std::string, std::uint64_t>;

  static double as_f64(std::uint64_t b) { return std::bit_cast<double>(b); }
  static std::uint64_t bits(double d) { return std::bit_cast<std::uint64_t>(d); }

  static std::uint64_t immediate(const std::string& s) {
    if (s.rfind("0d", 0) == 0 || s.rfind("0D", 0) == 0) return std::stoull(s.substr(2), nullptr, 16);
    if (s.rfind("0f", 0) == 0 || s.rfind("0F", 0) == 0) return std::stoull(s.substr(2), nullptr, 16);
    if (s.rfind("0x", 0) == 0 || s.rfind("0X", 0) == 0) return std::stoull(s.substr(2), nullptr, 16);
    if (s.rfind("-0x", 0) == 0) return static_cast<std::uint64_t>(-static_cast<std::int64_t>(std::stoull(s.substr(3), nullptr, 16)));
    return static_cast<std::uint64_t>(std::stoll(s));
  }

  static std::uint64_t value(const registers& r, const std::string& operand) {
    if (operand[0] == '%') {
      const auto it = r.find(operand);
      if (it == r.end()) throw std::runtime_error("read of unset register " + operand);
      return it->second;
    }
    return immediate(operand);
  }

  // "[name]" or "[name+8]"
  static std::pair<std::string, std::size_t> address(const std::string& operand) {
    const std::string inner = trim(operand.substr(1, operand.size() - 2));
    const auto plus = inner.find('+');
    if (plus == std::string::npos) return {inner, 0};
    return {trim(inner.substr(0, plus)), std::stoul(inner.substr(plus + 1))};
  }

  static std::vector<std::string> vector_operand(const std::string& operand) {
    return split_params(operand.substr(1, operand.size() - 2));
  }

  static int width_of(const std::string& type) { return std::stoi(type.substr(1)); }

  static std::uint64_t truncate(std::uint64_t v, int width) { return width >= 64 ? v : v & ((std::uint64_t{1} << width) - 1); }
  static std::int64_t signed_value(std::uint64_t v, int width) {
    if (width >= 64) return static_cast<std::int64_t>(v);
    const std::uint64_t sign = std::uint64_t{1} << (width - 1);
    v = truncate(v, width);
    return static_cast<std::int64_t>((v ^ sign) - sign);
  }

  void execute(const function& f, std::map<std::string, std::vector<std::uint8_t>>& params) const {
    registers r;
    std::map<std::string, bool> predicates;
    for (std::size_t pc = 0, steps = 0; pc < f.body.size(); ++steps) {
      if (steps > 1000000) throw std::runtime_error("runaway loop");
      const statement& s = f.body[pc++];
      if (!s.guard.empty()) {
        const auto p = predicates.find(s.guard);
        if (p == predicates.end()) throw std::runtime_error("unset predicate " + s.guard);
        if (p->second == s.negated) continue;
      }
      std::vector<std::string> parts;  // op split at '.'
      {
        std::string cur;
        for (char c : s.op) {
          if (c == '.') {
            parts.push_back(cur);
            cur.clear();
          } else {
            cur += c;
          }
        }
        parts.push_back(cur);
      }
      const std::string& base = parts[0];
      const std::string type = parts.back();
      const auto& o = s.operands;
      auto fail = [&](const std::string& why) {
        return std::runtime_error("line " + std::to_string(s.line) + " (" + s.op + "): " + why);
      };
      auto set = [&](const std::string& reg, std::uint64_t v) { r[reg] = v; };
      if (base == "ret") return;
      if (base == "bra") {
        const auto l = f.labels.find(o[0]);
        if (l == f.labels.end()) throw fail("no label " + o[0]);
        pc = l->second;
        continue;
      }
      if (base == "ld" || base == "st") {
        if (parts[1] != "param") throw fail("only .param memory is modelled");
        const bool is_vector = parts[2][0] == 'v';
        const int count = is_vector ? parts[2][1] - '0' : 1;
        const int bytes = width_of(type) / 8;
        const auto [name, offset] = address(base == "ld" ? o[1] : o[0]);
        auto& buffer = params.at(name);
        const std::vector<std::string> regs = is_vector ? vector_operand(base == "ld" ? o[0] : o[1])
                                                        : std::vector<std::string>{base == "ld" ? o[0] : o[1]};
        for (int m = 0; m < count; ++m) {
          const std::size_t at = offset + static_cast<std::size_t>(m * bytes);
          if (at + bytes > buffer.size()) throw fail("parameter access out of bounds");
          if (base == "ld") {
            std::uint64_t v = 0;
            std::memcpy(&v, buffer.data() + at, bytes);
            set(regs[m], v);
          } else {
            const std::uint64_t v = value(r, regs[m]);
            std::memcpy(buffer.data() + at, &v, bytes);
          }
        }
        continue;
      }
      if (base == "mov") {
        const int w = width_of(type);
        if (o[1][0] == '{') {  // pack: the first element is the low half
          const auto e = vector_operand(o[1]);
          const int part = w / static_cast<int>(e.size());
          std::uint64_t v = 0;
          for (std::size_t m = 0; m < e.size(); ++m) v |= truncate(value(r, e[m]), part) << (part * static_cast<int>(m));
          set(o[0], v);
        } else if (o[0][0] == '{') {  // unpack
          const auto e = vector_operand(o[0]);
          const int part = w / static_cast<int>(e.size());
          const std::uint64_t v = value(r, o[1]);
          for (std::size_t m = 0; m < e.size(); ++m) set(e[m], truncate(v >> (part * static_cast<int>(m)), part));
        } else {
          set(o[0], truncate(value(r, o[1]), w));
        }
        continue;
      }
      if (base == "setp") {
        const std::string cmp = parts[1];
        const std::uint64_t a = value(r, o[1]), b = value(r, o[2]);
        bool result = false;
        if (type == "f64") {
          const double x = as_f64(a), y = as_f64(b);
          if (cmp == "lt") result = x < y;
          else if (cmp == "le") result = x <= y;
          else if (cmp == "gt") result = x > y;
          else if (cmp == "ge") result = x >= y;
          else if (cmp == "eq") result = x == y;
          else if (cmp == "ne") result = x != y && !std::isnan(x) && !std::isnan(y);  // ordered
          else throw fail("comparison");
        } else {
          const int w = width_of(type);
          const bool is_signed = type[0] == 's';
          const auto ua = truncate(a, w), ub = truncate(b, w);
          const auto sa = signed_value(a, w), sb = signed_value(b, w);
          if (cmp == "lt") result = is_signed ? sa < sb : ua < ub;
          else if (cmp == "le") result = is_signed ? sa <= sb : ua <= ub;
          else if (cmp == "gt") result = is_signed ? sa > sb : ua > ub;
          else if (cmp == "ge") result = is_signed ? sa >= sb : ua >= ub;
          else if (cmp == "eq") result = ua == ub;
          else if (cmp == "ne") result = ua != ub;
          else throw fail("comparison");
        }
        predicates[o[0]] = result;
        continue;
      }
      if (type == "f64") {
        auto arg = [&](int i) { return as_f64(value(r, o[static_cast<std::size_t>(i)])); };
        if (parts.size() > 2 && parts[1] != "rn" && base != "cvt") throw fail("only .rn rounding is exact mode");
        double d = 0;
        if (base == "add") d = arg(1) + arg(2);
        else if (base == "sub") d = arg(1) - arg(2);
        else if (base == "mul") d = arg(1) * arg(2);
        else if (base == "div") d = arg(1) / arg(2);
        else if (base == "fma") d = std::fma(arg(1), arg(2), arg(3));
        else if (base == "neg") d = -arg(1);
        else if (base == "max") d = std::fmax(arg(1), arg(2));
        else if (base != "cvt") throw fail("unmodelled f64 instruction");
        if (base != "cvt") {
          set(o[0], bits(d));
          continue;
        }
      }
      if (base == "cvt") {  // cvt[.rnd].dst.src
        const std::string dst = parts[parts.size() - 2], src = parts.back();
        const std::string rnd = parts.size() == 4 ? parts[1] : "";
        const std::uint64_t a = value(r, o[1]);
        std::uint64_t out = 0;
        if (dst == "f64" && src == "f64") {
          const double x = as_f64(a);
          if (rnd == "rmi") out = bits(std::floor(x));
          else if (rnd == "rzi") out = bits(std::trunc(x));
          else throw fail("rounding");
        } else if (dst == "f64" && src == "f32") {
          out = bits(static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(a))));
        } else if (dst == "f64") {  // from an integer: round to nearest (the host's default mode)
          if (rnd != "rn") throw fail("rounding");
          const int w = width_of(src);
          out = bits(src[0] == 's' ? static_cast<double>(signed_value(a, w)) : static_cast<double>(truncate(a, w)));
        } else if (src == "f64") {  // to an integer
          const double x = as_f64(a);
          if (rnd != "rzi") throw fail("rounding");
          if (!(x >= 0 && x < 18446744073709551616.0) || dst[0] != 'u') throw fail("conversion out of the modelled range");
          out = truncate(static_cast<std::uint64_t>(x), width_of(dst));
        } else {  // integer to integer
          const int wd = width_of(dst), ws = width_of(src);
          out = src[0] == 's' ? truncate(static_cast<std::uint64_t>(signed_value(a, ws)), wd) : truncate(truncate(a, ws), wd);
        }
        set(o[0], out);
        continue;
      }
      // integer and bit instructions
      const int w = width_of(type);
      auto u = [&](int i) { return truncate(value(r, o[static_cast<std::size_t>(i)]), w); };
      std::uint64_t out = 0;
      if (base == "add") out = u(1) + u(2);
      else if (base == "sub") out = u(1) - u(2);
      else if (base == "mul" && parts[1] == "lo") out = u(1) * u(2);
      else if (base == "mul" && parts[1] == "hi" && w == 32) out = (u(1) * u(2)) >> 32;
      else if (base == "and") out = u(1) & u(2);
      else if (base == "or") out = u(1) | u(2);
      else if (base == "xor") out = u(1) ^ u(2);
      else if (base == "not") out = ~u(1);
      else if (base == "shl") out = u(1) << value(r, o[2]);
      else if (base == "shr" && type[0] == 'u') out = u(1) >> value(r, o[2]);
      else if (base == "max" && type[0] == 'u') out = std::max(u(1), u(2));
      else if (base == "bfe" && type == "u32") out = (u(1) >> value(r, o[2])) & ((std::uint64_t{1} << value(r, o[3])) - 1);
      else throw fail("unmodelled instruction");
      set(o[0], truncate(out, w));
    }
    throw std::runtime_error("fell off the end of a function");
  }
};

}  // namespace resample::test
