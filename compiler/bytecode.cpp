#include "compiler/bytecode.h"

namespace compiler {

const char* op_name(Op op) {
  static const char* const names[] = {
#define GCLAB_OP_NAME(name) #name,
      GCLAB_OPCODES(GCLAB_OP_NAME)
#undef GCLAB_OP_NAME
  };
  auto i = static_cast<size_t>(op);
  return i < static_cast<size_t>(Op::Count) ? names[i] : "?";
}

namespace {
uint32_t intern(const std::string& name, std::vector<std::string>& names,
                std::unordered_map<std::string, uint32_t>& index) {
  auto [it, fresh] = index.try_emplace(name, static_cast<uint32_t>(names.size()));
  if (fresh) names.push_back(name);
  return it->second;
}
}  // namespace

uint32_t Program::symbol(const std::string& name) { return intern(name, symbols, symbol_index); }
uint32_t Program::global(const std::string& name) { return intern(name, globals, global_index); }

}  // namespace compiler
