// A small strict JSON reader and the string quoting its writers need.
#include "ember/core/json.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "ember/core/error.h"

namespace ember {
namespace json {
namespace {

class Parser {
 public:
  Parser(const std::string& text, const std::string& where, size_t max_items)
      : s_(text), where_(where), max_items_(max_items) {}
  Value parse() {
    Value v = value(0);
    ws();
    if (i_ != s_.size()) fail("unexpected trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    EMBER_THROW(Error, where_, ": malformed JSON at byte ", i_, ": ", what);
  }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
  }
  char peek() {
    ws();
    if (i_ >= s_.size()) fail("unexpected end");
    return s_[i_];
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++i_;
  }
  Value value(int depth) {
    if (depth > 64) fail("nesting too deep");
    char c = peek();
    Value v;
    if (c == '{') {
      v.kind = Value::Object;
      ++i_;
      if (peek() == '}') {
        ++i_;
        return v;
      }
      while (true) {
        if (peek() != '"') fail("expected a member name");
        std::string k = string();
        expect(':');
        v.members.emplace_back(k, value(depth + 1));
        char d = peek();
        ++i_;
        if (d == '}') break;
        if (d != ',') fail("expected ',' or '}'");
      }
    } else if (c == '[') {
      v.kind = Value::Array;
      ++i_;
      if (peek() == ']') {
        ++i_;
        return v;
      }
      while (true) {
        if (v.items.size() == max_items_) fail("array longer than " + std::to_string(max_items_) + " items");
        v.items.push_back(value(depth + 1));
        char d = peek();
        ++i_;
        if (d == ']') break;
        if (d != ',') fail("expected ',' or ']'");
      }
    } else if (c == '"') {
      v.kind = Value::String;
      v.str = string();
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      v.kind = Value::Number;
      size_t start = i_;
      if (s_[i_] == '-') ++i_;
      while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.' || s_[i_] == 'e' ||
                                s_[i_] == 'E' || s_[i_] == '+' || s_[i_] == '-'))
        ++i_;
      v.num = s_.substr(start, i_ - start);
    } else if (s_.compare(i_, 4, "true") == 0 || s_.compare(i_, 5, "false") == 0) {
      v.kind = Value::Bool;
      v.b = s_[i_] == 't';
      i_ += v.b ? 4 : 5;
    } else if (s_.compare(i_, 4, "null") == 0) {
      i_ += 4;
    } else {
      fail(std::string("unexpected character '") + c + "'");
    }
    return v;
  }
  std::string string() {
    expect('"');
    std::string out;
    while (true) {
      if (i_ >= s_.size()) fail("unterminated string");
      char c = s_[i_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) fail("unterminated escape");
      char e = s_[i_++];
      switch (e) {
        case '"': case '\\': case '/': out += e; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          if (i_ + 4 > s_.size() || !std::all_of(s_.begin() + static_cast<std::ptrdiff_t>(i_),
                                                  s_.begin() + static_cast<std::ptrdiff_t>(i_ + 4),
                                                  [](char h) { return std::isxdigit(static_cast<unsigned char>(h)); }))
            fail("bad \\u escape");
          unsigned cp = static_cast<unsigned>(std::stoul(s_.substr(i_, 4), nullptr, 16));
          i_ += 4;
          if (cp < 0x80) {
            out += static_cast<char>(cp);
          } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          }
          break;
        }
        default: fail("bad escape");
      }
    }
  }
  const std::string& s_;
  std::string where_;
  size_t max_items_;
  size_t i_ = 0;
};

}  // namespace

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

Value parse(const std::string& text, const std::string& where, size_t max_items) {
  return Parser(text, where, max_items).parse();
}

const Value* Value::find(const std::string& key) const {
  for (const auto& [k, v] : members)
    if (k == key) return &v;
  return nullptr;
}

}  // namespace json
}  // namespace ember
