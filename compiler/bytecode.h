// The bytecode: what the compiler produces and the interpreter runs.
//
// A stack machine. Each function's frame is a window of the fiber's value
// stack starting at `base`:
//
//   base[0]              the callee (the closure being run)
//   base[1]              `this` for methods, else the first parameter
//   base[1 or 2 ...]     parameters, then locals and temporaries
//
// A method is a function whose first parameter is the hidden `this`
// (Function::is_method); its declared parameters start at base[2].
//
// Operands follow the opcode byte, little-endian: u8, u16, u32 or i32 as
// listed. Jump offsets are relative to the address just after the operand.
// "name" operands index Program::symbols; "global" operands index
// Program::globals; "k" operands index the function's constants.
//
// Captured variables live in cells (boxes): a local that any closure
// captures holds a cell in its slot from its declaration on, and the
// compiler uses the *Boxed ops for it. Closures hold cells, never stack
// addresses, so frames are never heap-allocated and fibers' stacks can move.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace compiler {

// The table is aligned by hand.
// clang-format off
#define GCLAB_OPCODES(X)                                                                      \
  /* name              operands           stack effect */                                       \
  X(Const)          /* u32 k             -> constants[k] (num or string)                   */ \
  X(Nil)            /*                   -> nil                                            */ \
  X(True)           /*                   -> true                                           */ \
  X(False)          /*                   -> false                                          */ \
  X(Pop)            /*                   a ->                                              */ \
  X(PopN)           /* u16 n             a1..an ->                                         */ \
  X(Dup)            /*                   a -> a a                                          */ \
  X(Dup2)           /*                   a b -> a b a b                                    */ \
  X(GetLocal)       /* u16 slot          -> base[slot]                                     */ \
  X(SetLocal)       /* u16 slot          v -> v          base[slot] = v                    */ \
  X(GetBoxed)       /* u16 slot          -> cell(base[slot]).value                         */ \
  X(SetBoxed)       /* u16 slot          v -> v                                            */ \
  X(Box)            /* u16 slot          base[slot] = new cell holding base[slot]          */ \
  X(Rebox)          /* u16 slot          base[slot] = new cell holding its cell's value    */ \
  X(GetUpval)       /* u16 i             -> cell i of the running closure (base[0])        */ \
  X(SetUpval)       /* u16 i             v -> v                                            */ \
  X(GetGlobal)      /* u32 global        -> value; unset: error undefined variable         */ \
  X(SetGlobal)      /* u32 global        v -> v; unset: error undefined variable           */ \
  X(DefineGlobal)   /* u32 global        v ->            (declares, or redefines)          */ \
  X(GetField)       /* u32 name, u32 ic  obj -> field value or bound method                */ \
  X(SetField)       /* u32 name, u32 ic  obj v -> v                                        */ \
  X(SetLocalField)  /* u16 slot, u32 name, u32 ic  v -> v  base[slot].name = v: a local  */ \
                    /* receiver is read after the value when the value cannot assign it    */ \
  X(GetIndex)       /*                   a i -> a[i]                                       */ \
  X(SetIndex)       /*                   a i v -> v                                        */ \
  X(GetMethod)      /* u32 name, u32 ic  obj -> callee obj   (start of obj.name(args))     */ \
  X(CallMethod)     /* u16 argc          callee obj a1..an -> result                       */ \
  X(GetSuper)       /* u32 name          this superclass -> bound method                   */ \
  X(SuperInvoke)    /* u32 name, u16 argc  this superclass a1..an -> result                */ \
  X(Call)           /* u16 argc          f a1..an -> result                                */ \
  X(Return)         /*                   v -> (returns v; initializers return base[1])     */ \
  X(Closure)        /* u32 k, then per upvalue: u8 from_local, u16 index   -> closure      */ \
  X(Class)          /* u32 k (class desc)  [superclass] m1..mn -> class                    */ \
  X(Array)          /* u32 n             e1..en -> array                                   */ \
  X(Map)            /* u32 n             k1 v1 .. kn vn -> map                             */ \
  X(IterPrep)       /* u16 slot          checks base[slot] is iterable, sets slot+1, +2    */ \
  X(IterNext)       /* u16 slot, i32 off -> next element, or jumps by off when exhausted   */ \
  X(Import)         /* u32 module        -> v: runs the module's top level once per process */ \
  X(ReplPrint)      /*                   v ->            prints v unless nil (REPL only)   */ \
  X(Jump)           /* i32 off                                                             */ \
  X(JumpIfFalse)    /* i32 off           v ->            jumps if v is falsy               */ \
  X(JumpIfFalseKeep)/* i32 off           v -> v (jumps) or -> (falls through): for &&      */ \
  X(JumpIfTrueKeep) /* i32 off           v -> v (jumps) or -> (falls through): for ||      */ \
  X(Add) X(Sub) X(Mul) X(Div) X(Mod)   /* a b -> a op b                                    */ \
  X(BitAnd) X(BitOr) X(BitXor) X(Shl) X(Shr)                                                  \
  X(Eq) X(Ne) X(Lt) X(Le) X(Gt) X(Ge)                                                         \
  X(Is)             /*                   x C -> bool     (C must be a class)               */ \
  X(Neg) X(Not) X(BitNot)              /* a -> op a                                        */ \
  /* Superinstructions: pairs fused as they are emitted (codegen.cpp, fuse)                */ \
  X(StoreLocal)     /* u16 slot          v ->            base[slot] = v     SetLocal Pop   */ \
  X(GetLocalField)  /* u16 slot, u32 name, u32 ic  -> base[slot].name   GetLocal GetField  */ \
  X(IsNil)          /*                   a -> a == nil                      Nil Eq         */ \
  X(NotNil)         /*                   a -> a != nil                      Nil Ne         */ \
  X(JumpIfTrue)     /* i32 off           v ->  jumps if v is truthy     Not JumpIfFalse    */ \
  X(JumpIfNil)      /* i32 off           v ->  jumps if v is nil        NotNil JumpIfFalse */ \
  X(JumpIfNotNil)   /* i32 off           v ->  jumps unless v is nil    IsNil JumpIfFalse  */ \
  X(StoreField)     /* u32 name, u32 ic  obj v ->                       SetField Pop       */ \
  X(StoreLocalField)/* u16 slot, u32 name, u32 ic  v ->               SetLocalField Pop  */ \
  X(StoreBoxed)     /* u16 slot          v ->                            SetBoxed Pop       */ \
  X(StoreUpval)     /* u16 i             v ->                            SetUpval Pop       */ \
  X(StoreGlobal)    /* u32 global        v ->                            SetGlobal Pop      */ \
  X(AddLocal) X(SubLocal) X(MulLocal) X(DivLocal)                                             \
                    /* u16 slot          a -> a op base[slot]            GetLocal op        */ \
  X(JumpUnlessEq) X(JumpUnlessNe) X(JumpUnlessLt)                                             \
  X(JumpUnlessLe) X(JumpUnlessGt) X(JumpUnlessGe)                                             \
                    /* i32 off           a b ->  jumps unless a op b    op JumpIfFalse     */ \
  X(AddConst) X(SubConst) X(MulConst) X(DivConst) X(ModConst)                                 \
                    /* u32 k             a -> a op k                     Const op           */ \
  /* Chains: a superinstruction fused again with the GetLocal before it                    */ \
  X(AddLocals) X(SubLocals) X(MulLocals) X(DivLocals)                                         \
                    /* u16 a, u16 b      -> base[a] op base[b]           GetLocal opLocal   */ \
  X(JumpIfNilLocal) X(JumpIfNotNilLocal)                                                      \
                    /* u16 slot, i32 off  jumps if base[slot] is (not) nil  GetLocal JumpIf*Nil */ \
  X(JumpUnlessLtLocal) X(JumpUnlessLeLocal) X(JumpUnlessGtLocal) X(JumpUnlessGeLocal)         \
                    /* u16 b, i32 off    a -> jumps unless a op base[b]  GetLocal JumpUnless*/ \
  X(JumpUnlessLtLocals) X(JumpUnlessLeLocals) X(JumpUnlessGtLocals) X(JumpUnlessGeLocals)     \
                    /* u16 a, u16 b, i32 off  jumps unless base[a] op base[b]  the same, twice */
// clang-format on

enum class Op : uint8_t {
#define GCLAB_OP_ENUM(name) name,
  GCLAB_OPCODES(GCLAB_OP_ENUM)
#undef GCLAB_OP_ENUM
      Count
};

const char* op_name(Op op);

// for-in uses three consecutive hidden locals: slot = the iterable,
// slot+1 = a snapshot of a map's keys (else nil), slot+2 = the next index.
// IterNext pushes the element, which becomes the loop variable's slot.

struct Constant {
  enum class Kind : uint8_t { kNum, kString, kFunction, kClass };
  Kind kind;
  double num = 0;
  std::string str;     // kString
  uint32_t index = 0;  // kFunction: Program::functions; kClass: Program::classes
};

struct Function {
  std::string name;             // as in stack traces: "f", "Point.norm", "<fn>", "<script>"
  std::string file;             // as given on the command line, imports joined to the importer's folder
  uint16_t arity = 0;           // declared parameters (not counting `this`)
  bool is_method = false;       // base[1] is `this`
  bool is_initializer = false;  // a class's init: its returns give back `this`
  uint32_t max_slots = 0;       // most stack slots the frame uses, from base[0]
  uint16_t num_upvalues = 0;
  uint32_t num_ics = 0;  // inline-cache sites (GetField, SetField, GetMethod)
  std::vector<uint8_t> code;
  std::vector<uint32_t> lines;  // source line of each code byte
  std::vector<Constant> constants;
};

enum class FieldKind : uint8_t { kAny, kNum, kBool };

struct FieldDesc {
  uint32_t name;  // symbol
  FieldKind kind;
};

struct ClassDesc {
  std::string name;
  std::string file;
  uint32_t line = 0;
  bool has_super = false;
  std::vector<FieldDesc> fields;  // declared in this class, in order
  std::vector<uint32_t> methods;  // symbols, in the order of the closures on the stack
};

struct Module {
  std::string path;       // normalised path, the key for "runs once"
  uint32_t function = 0;  // its top-level function
};

// Everything compiled in one process: scripts, imports, REPL lines. It only
// grows, so indices stay valid and the REPL can compile line after line.
struct Program {
  std::vector<std::unique_ptr<Function>> functions;
  std::vector<std::unique_ptr<ClassDesc>> classes;
  std::vector<Module> modules;
  std::unordered_map<std::string, uint32_t> module_index;

  std::vector<std::string> symbols;  // field and method names
  std::unordered_map<std::string, uint32_t> symbol_index;
  std::vector<std::string> globals;  // global variable names
  std::unordered_map<std::string, uint32_t> global_index;

  uint32_t symbol(const std::string& name);
  uint32_t global(const std::string& name);
};

}  // namespace compiler
