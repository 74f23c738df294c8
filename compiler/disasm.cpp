// The disassembler behind `vm --disasm`: one line per instruction
//   OFFSET LINE OPCODE OPERANDS  ; decoded meaning
// then, recursively, every function whose closure the code creates.
#include <cstring>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "compiler/compiler.h"

namespace compiler {
namespace {

class Disassembler {
 public:
  Disassembler(const Program& program, std::ostream& out) : program_(program), out_(out) {}

  void function(uint32_t index) {
    const Function& fn = *program_.functions[index];
    out_ << "== " << fn.name << " (" << fn.file << ") #" << index << ": arity " << fn.arity
         << (fn.is_method ? ", method" : "") << (fn.is_initializer ? ", initializer" : "") << ", slots "
         << fn.max_slots << ", upvalues " << fn.num_upvalues << ", ics " << fn.num_ics << " ==\n";
    std::vector<uint32_t> nested;
    for (size_t pc = 0; pc < fn.code.size();) {
      pc = instruction(fn, pc, nested);
      out_ << "\n";
    }
    for (uint32_t child : nested) {
      out_ << "\n";
      function(child);
    }
  }

 private:
  const Program& program_;
  std::ostream& out_;

  template <typename T>
  static T read(const Function& fn, size_t at) {
    T v{};
    if (at + sizeof(T) <= fn.code.size()) std::memcpy(&v, &fn.code[at], sizeof(T));
    return v;
  }

  std::string constant(const Function& fn, uint32_t k) const {
    if (k >= fn.constants.size()) return "?";
    const Constant& c = fn.constants[k];
    std::ostringstream s;
    switch (c.kind) {
      case Constant::Kind::kNum:
        s << std::setprecision(17) << c.num;
        break;
      case Constant::Kind::kString:
        s << quoted(c.str);
        break;
      case Constant::Kind::kFunction:
        s << "<fn " << (c.index < program_.functions.size() ? program_.functions[c.index]->name : "?") << ">";
        break;
      case Constant::Kind::kClass:
        s << "<class " << (c.index < program_.classes.size() ? program_.classes[c.index]->name : "?") << ">";
        break;
    }
    return s.str();
  }

  static std::string quoted(const std::string& str) {
    std::string out = "\"";
    for (unsigned char ch : str) {
      if (ch == '"' || ch == '\\')
        out += '\\', out += static_cast<char>(ch);
      else if (ch == '\n')
        out += "\\n";
      else if (ch == '\t')
        out += "\\t";
      else if (ch < 0x20 || ch == 0x7f) {
        static const char* hex = "0123456789abcdef";
        out += "\\x";
        out += hex[ch >> 4];
        out += hex[ch & 15];
      } else
        out += static_cast<char>(ch);
    }
    return out + "\"";
  }

  std::string symbol(uint32_t i) const { return i < program_.symbols.size() ? program_.symbols[i] : "?"; }
  std::string global(uint32_t i) const { return i < program_.globals.size() ? program_.globals[i] : "?"; }

  // Prints the instruction at `pc`; returns the next instruction's offset.
  size_t instruction(const Function& fn, size_t pc, std::vector<uint32_t>& nested) {
    Op op = static_cast<Op>(fn.code[pc]);
    out_ << std::setw(5) << std::setfill('0') << pc << std::setfill(' ') << " ";
    bool same_line = pc > 0 && fn.lines[pc] == fn.lines[pc - 1];
    if (same_line)
      out_ << std::setw(4) << "|";
    else
      out_ << std::setw(4) << fn.lines[pc];
    out_ << "  " << std::left << std::setw(19) << op_name(op) << std::right;
    size_t at = pc + 1;
    switch (op) {
      case Op::Const: {
        uint32_t k = read<uint32_t>(fn, at);
        out_ << k << "  ; " << constant(fn, k);
        return at + 4;
      }
      case Op::GetGlobal:
      case Op::SetGlobal:
      case Op::StoreGlobal:
      case Op::DefineGlobal: {
        uint32_t g = read<uint32_t>(fn, at);
        out_ << g << "  ; " << global(g);
        return at + 4;
      }
      case Op::Array:
      case Op::Map:
      case Op::Import:
        out_ << read<uint32_t>(fn, at);
        if (op == Op::Import) {
          uint32_t m = read<uint32_t>(fn, at);
          if (m < program_.modules.size()) out_ << "  ; " << program_.modules[m].path;
        }
        return at + 4;
      case Op::Class: {
        uint32_t k = read<uint32_t>(fn, at);
        out_ << k << "  ; " << constant(fn, k);
        return at + 4;
      }
      case Op::PopN:
      case Op::GetLocal:
      case Op::SetLocal:
      case Op::GetBoxed:
      case Op::SetBoxed:
      case Op::Box:
      case Op::Rebox:
      case Op::GetUpval:
      case Op::SetUpval:
      case Op::CallMethod:
      case Op::Call:
      case Op::IterPrep:
      case Op::StoreLocal:
      case Op::StoreBoxed:
      case Op::StoreUpval:
      case Op::AddLocal:
      case Op::SubLocal:
      case Op::MulLocal:
      case Op::DivLocal:
        out_ << read<uint16_t>(fn, at);
        return at + 2;
      case Op::GetField:
      case Op::SetField:
      case Op::StoreField:
      case Op::GetMethod: {
        uint32_t name = read<uint32_t>(fn, at);
        out_ << name << " ic " << read<uint32_t>(fn, at + 4) << "  ; " << symbol(name);
        return at + 8;
      }
      case Op::GetLocalField:
      case Op::SetLocalField:
      case Op::StoreLocalField: {
        uint32_t name = read<uint32_t>(fn, at + 2);
        out_ << read<uint16_t>(fn, at) << " " << name << " ic " << read<uint32_t>(fn, at + 6) << "  ; "
             << symbol(name);
        return at + 10;
      }
      case Op::GetSuper: {
        uint32_t name = read<uint32_t>(fn, at);
        out_ << name << "  ; " << symbol(name);
        return at + 4;
      }
      case Op::SuperInvoke: {
        uint32_t name = read<uint32_t>(fn, at);
        out_ << name << " argc " << read<uint16_t>(fn, at + 4) << "  ; " << symbol(name);
        return at + 6;
      }
      case Op::IterNext: {
        int32_t off = read<int32_t>(fn, at + 2);
        out_ << read<uint16_t>(fn, at) << " " << off << "  ; -> " << static_cast<long>(at + 6) + off;
        return at + 6;
      }
      case Op::Jump:
      case Op::JumpIfFalse:
      case Op::JumpIfFalseKeep:
      case Op::JumpIfTrueKeep:
      case Op::JumpIfTrue:
      case Op::JumpIfNil:
      case Op::JumpIfNotNil:
      case Op::JumpUnlessEq:
      case Op::JumpUnlessNe:
      case Op::JumpUnlessLt:
      case Op::JumpUnlessLe:
      case Op::JumpUnlessGt:
      case Op::JumpUnlessGe: {
        int32_t off = read<int32_t>(fn, at);
        out_ << off << "  ; -> " << static_cast<long>(at + 4) + off;
        return at + 4;
      }
      case Op::AddConst:
      case Op::SubConst:
      case Op::MulConst:
      case Op::DivConst:
      case Op::ModConst: {
        uint32_t k = read<uint32_t>(fn, at);
        out_ << k << "  ; " << constant(fn, k);
        return at + 4;
      }
      case Op::AddLocals:
      case Op::SubLocals:
      case Op::MulLocals:
      case Op::DivLocals:
        out_ << read<uint16_t>(fn, at) << " " << read<uint16_t>(fn, at + 2);
        return at + 4;
      case Op::JumpIfNilLocal:
      case Op::JumpIfNotNilLocal:
      case Op::JumpUnlessLtLocal:
      case Op::JumpUnlessLeLocal:
      case Op::JumpUnlessGtLocal:
      case Op::JumpUnlessGeLocal: {
        int32_t off = read<int32_t>(fn, at + 2);
        out_ << read<uint16_t>(fn, at) << " " << off << "  ; -> " << static_cast<long>(at + 6) + off;
        return at + 6;
      }
      case Op::JumpUnlessLtLocals:
      case Op::JumpUnlessLeLocals:
      case Op::JumpUnlessGtLocals:
      case Op::JumpUnlessGeLocals: {
        int32_t off = read<int32_t>(fn, at + 4);
        out_ << read<uint16_t>(fn, at) << " " << read<uint16_t>(fn, at + 2) << " " << off << "  ; -> "
             << static_cast<long>(at + 8) + off;
        return at + 8;
      }
      case Op::Closure:
        return closure(fn, at, nested);
      default:
        return at;
    }
  }

  size_t closure(const Function& fn, size_t at, std::vector<uint32_t>& nested) {
    uint32_t k = read<uint32_t>(fn, at);
    out_ << k << "  ; " << constant(fn, k);
    at += 4;
    uint16_t count = 0;
    if (k < fn.constants.size() && fn.constants[k].kind == Constant::Kind::kFunction &&
        fn.constants[k].index < program_.functions.size()) {
      nested.push_back(fn.constants[k].index);
      count = program_.functions[fn.constants[k].index]->num_upvalues;
    }
    for (uint16_t i = 0; i < count; ++i, at += 3) {
      out_ << (read<uint8_t>(fn, at) ? " local " : " upval ") << read<uint16_t>(fn, at + 1);
    }
    return at;
  }
};

}  // namespace

void disassemble(const Program& program, uint32_t function, std::ostream& out) {
  if (function >= program.functions.size()) return;
  Disassembler(program, out).function(function);
}

}  // namespace compiler
