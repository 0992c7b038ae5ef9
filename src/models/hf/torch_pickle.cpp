// A restricted unpickler for torch.save's pickles: the opcode set of torch's weights_only
// unpickler (torch/_weights_only_unpickler.py), interpreted over plain values, and a short list of
// globals that a state dict of tensors needs. No global is ever looked up or called: each allowed
// name is a token that REDUCE knows how to interpret.
#include "models/hf/torch_pickle.hpp"

#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>

#include "lmeval/core/error.hpp"

namespace lmeval::hf {

namespace {

namespace tp {

// What torch.save writes for a state dict, as values of this unpickler.
enum class Type {
  kNone,
  kBool,
  kInt,
  kFloat,
  kStr,
  kTuple,
  kList,
  kDict,
  kGlobal,   // an allowed global: s = "module.name"
  kStorage,  // a persistent id: storage = index into storages
  kTensor,
};

struct Obj {
  Type type = Type::kNone;
  int64_t i = 0;  // kInt, kBool; kStorage: index
  double f = 0;
  std::string s;            // kStr, kGlobal
  std::vector<Obj*> items;  // kTuple, kList; kDict: key, value, key, value, ...
  PickledTensor tensor;     // kTensor (name unset)
};

const char* type_name(Type t) {
  switch (t) {
    case Type::kNone:
      return "None";
    case Type::kBool:
      return "a bool";
    case Type::kInt:
      return "an int";
    case Type::kFloat:
      return "a float";
    case Type::kStr:
      return "a string";
    case Type::kTuple:
      return "a tuple";
    case Type::kList:
      return "a list";
    case Type::kDict:
      return "a dict";
    case Type::kGlobal:
      return "a global";
    case Type::kStorage:
      return "a storage";
    case Type::kTensor:
      return "a tensor";
  }
  return "a value";
}

// torch's storage classes (torch.FloatStorage, ...) and the element type each holds.
const std::map<std::string, std::string>& storage_dtypes() {
  static const std::map<std::string, std::string> m = {
      {"torch.DoubleStorage", "F64"}, {"torch.FloatStorage", "F32"},
      {"torch.HalfStorage", "F16"},   {"torch.BFloat16Storage", "BF16"},
      {"torch.LongStorage", "I64"},   {"torch.IntStorage", "I32"},
      {"torch.ShortStorage", "I16"},  {"torch.CharStorage", "I8"},
      {"torch.ByteStorage", "U8"},    {"torch.BoolStorage", "BOOL"},
      {"torch.UntypedStorage", "U8"}};
  return m;
}

// Globals a state dict's pickle names. Others that torch's weights_only unpickler allows build
// values a state dict of dense tensors does not hold (quantised, sparse, meta and subclass
// tensors, sets, complex numbers) and are refused with the rest.
bool allowed_global(const std::string& g) {
  static const std::vector<std::string> names = {"collections.OrderedDict",
                                                 "torch._utils._rebuild_tensor_v2",
                                                 "torch._utils._rebuild_tensor",
                                                 "torch._utils._rebuild_parameter",
                                                 "torch._utils._rebuild_parameter_with_state",
                                                 "torch._tensor._rebuild_from_type_v2",
                                                 "torch.Tensor",
                                                 "torch.nn.parameter.Parameter"};
  for (const auto& n : names)
    if (n == g) return true;
  return storage_dtypes().count(g) > 0;
}

class Unpickler {
 public:
  Unpickler(std::string_view bytes, const std::string& file, std::optional<StorageIds> ids)
      : b_(bytes), file_(file), ids_(ids) {}

  Obj* run() {
    for (;;) {
      const size_t at = pos_;
      const auto op = static_cast<unsigned char>(byte());
      op_at_ = at;
      switch (op) {
        case 0x80:  // PROTO: torch writes 2; its unpickler warns about others and reads on
          if (static_cast<unsigned char>(byte()) > 5) fail("unknown pickle protocol");
          break;
        case '.': {  // STOP
          Obj* r = pop();
          return r;
        }
        case 'c':  // GLOBAL
          op_global();
          break;
        case 'R':  // REDUCE
          op_reduce();
          break;
        case 'b': {  // BUILD: OrderedDict's state (state_dict's _metadata) is not needed
          pop();
          if (top()->type != Type::kDict) fail("BUILD of " + std::string(type_name(top()->type)));
          break;
        }
        case 'a': {  // APPEND
          Obj* v = pop();
          list_target("APPEND")->items.push_back(v);
          break;
        }
        case 'e': {  // APPENDS
          auto items = pop_mark();
          auto* l = list_target("APPENDS");
          l->items.insert(l->items.end(), items.begin(), items.end());
          break;
        }
        case 's': {  // SETITEM
          Obj* v = pop();
          Obj* k = pop();
          auto* d = dict_target("SETITEM");
          d->items.push_back(k);
          d->items.push_back(v);
          break;
        }
        case 'u': {  // SETITEMS
          auto items = pop_mark();
          if (items.size() % 2) fail("SETITEMS with an odd number of items");
          auto* d = dict_target("SETITEMS");
          d->items.insert(d->items.end(), items.begin(), items.end());
          break;
        }
        case '(':  // MARK
          marks_.push_back(stack_.size());
          break;
        case 't': {  // TUPLE
          Obj* t = make(Type::kTuple);
          t->items = pop_mark();
          push(t);
          break;
        }
        case 0x85:
        case 0x86:
        case 0x87: {  // TUPLE1..3
          const size_t n = op - 0x84;
          if (stack_.size() < n + floor()) fail("TUPLE" + std::to_string(n) + " on a short stack");
          Obj* t = make(Type::kTuple);
          t->items.assign(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
          stack_.resize(stack_.size() - n);
          push(t);
          break;
        }
        case 'N':
          push(make(Type::kNone));
          break;
        case 0x88:
        case 0x89: {  // NEWTRUE, NEWFALSE
          Obj* o = make(Type::kBool);
          o->i = op == 0x88;
          push(o);
          break;
        }
        case ')':
          push(make(Type::kTuple));
          break;
        case ']':
        case 0x8f:  // EMPTY_SET: nothing can be added to it (ADDITEMS is not accepted)
          push(make(Type::kList));
          break;
        case '}':
          push(make(Type::kDict));
          break;
        case 'J': {  // BININT
          int32_t v;
          std::memcpy(&v, take(4), 4);
          push_int(v);
          break;
        }
        case 'K':
          push_int(static_cast<unsigned char>(byte()));
          break;
        case 'M': {
          const auto* p = reinterpret_cast<const unsigned char*>(take(2));
          push_int(p[0] | (p[1] << 8));
          break;
        }
        case 0x8a: {  // LONG1: little-endian two's complement
          const auto n = static_cast<unsigned char>(byte());
          if (n > 8) fail("an integer of " + std::to_string(n) + " bytes");
          const auto* p = reinterpret_cast<const unsigned char*>(take(n));
          uint64_t u = 0;
          for (size_t k = 0; k < n; ++k) u |= static_cast<uint64_t>(p[k]) << (8 * k);
          if (n > 0 && n < 8 && (p[n - 1] & 0x80)) u |= ~uint64_t{0} << (8 * n);
          push_int(static_cast<int64_t>(u));
          break;
        }
        case 'G': {  // BINFLOAT: big-endian double
          const auto* p = reinterpret_cast<const unsigned char*>(take(8));
          uint64_t u = 0;
          for (int k = 0; k < 8; ++k) u = (u << 8) | p[k];
          Obj* o = make(Type::kFloat);
          std::memcpy(&o->f, &u, 8);
          push(o);
          break;
        }
        case 'X': {  // BINUNICODE
          uint32_t n;
          std::memcpy(&n, take(4), 4);
          push_str(take(n), n);
          break;
        }
        case 'U': {  // SHORT_BINSTRING
          const auto n = static_cast<unsigned char>(byte());
          push_str(take(n), n);
          break;
        }
        case 'Q':  // BINPERSID
          op_persid();
          break;
        case 'h':
          push(memo_get(static_cast<unsigned char>(byte())));
          break;
        case 'j': {
          uint32_t k;
          std::memcpy(&k, take(4), 4);
          push(memo_get(k));
          break;
        }
        case 'q':
          memo_[static_cast<unsigned char>(byte())] = top();
          break;
        case 'r': {
          uint32_t k;
          std::memcpy(&k, take(4), 4);
          memo_[k] = top();
          break;
        }
        default: {
          char hex[8];
          std::snprintf(hex, sizeof hex, "0x%02x", op);
          fail(std::string("opcode ") + hex +
               ", which torch.load(weights_only=True) does not accept either");
        }
      }
    }
  }

  size_t end() const { return pos_; }
  const std::vector<PickledStorage>& storages() const { return storages_; }

  [[noreturn]] void fail(const std::string& what) const {
    throw UserError("unreadable pickle: " + what + " (byte " + std::to_string(op_at_) + ")",
                    {file_, 0, 0, ""},
                    "a state dict written by torch.save (lm-eval runs no code from a pickle)");
  }

 private:
  char byte() { return *take(1); }
  const char* take(size_t n) {
    if (n > b_.size() - pos_) fail("the pickle is truncated");
    const char* p = b_.data() + pos_;
    pos_ += n;
    return p;
  }
  Obj* make(Type t) {
    arena_.push_back(std::make_unique<Obj>());
    arena_.back()->type = t;
    return arena_.back().get();
  }
  void push(Obj* o) { stack_.push_back(o); }
  void push_int(int64_t v) {
    Obj* o = make(Type::kInt);
    o->i = v;
    push(o);
  }
  void push_str(const char* p, size_t n) {
    Obj* o = make(Type::kStr);
    o->s.assign(p, n);
    push(o);
  }
  size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  Obj* top() const {
    if (stack_.size() <= floor()) fail("an opcode on an empty stack");
    return stack_.back();
  }
  Obj* pop() {
    Obj* o = top();
    stack_.pop_back();
    return o;
  }
  std::vector<Obj*> pop_mark() {
    if (marks_.empty()) fail("no MARK to pop to");
    const size_t m = marks_.back();
    marks_.pop_back();
    std::vector<Obj*> items(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return items;
  }
  Obj* memo_get(uint32_t k) const {
    auto it = memo_.find(k);
    if (it == memo_.end()) fail("memo entry " + std::to_string(k) + " was never stored");
    return it->second;
  }
  Obj* list_target(const char* op) const {
    Obj* l = top();
    if (l->type != Type::kList) fail(std::string(op) + " to " + type_name(l->type));
    return l;
  }
  Obj* dict_target(const char* op) const {
    Obj* d = top();
    if (d->type != Type::kDict) fail(std::string(op) + " on " + type_name(d->type));
    return d;
  }
  std::string line() {
    const size_t nl = b_.find('\n', pos_);
    if (nl == std::string_view::npos) fail("the pickle is truncated");
    std::string s(b_.substr(pos_, nl - pos_));
    pos_ = nl + 1;
    return s;
  }

  void op_global() {
    const std::string module = line();
    const std::string name = line();
    const std::string g = module + "." + name;
    if (!ids_ || !allowed_global(g))
      throw UserError("the pickle names the global " + g +
                          ", which a state dict of tensors does not need; lm-eval refuses it "
                          "rather than run code from the file (byte " +
                          std::to_string(op_at_) + ")",
                      {file_, 0, 0, ""},
                      "a state dict written by torch.save: tensors under their names");
    Obj* o = make(Type::kGlobal);
    o->s = g;
    push(o);
  }

  int64_t int_of(const Obj* o, const std::string& what) const {
    if (o->type != Type::kInt) fail(what + " is " + type_name(o->type) + ", not an int");
    return o->i;
  }
  std::vector<int64_t> ints_of(const Obj* o, const std::string& what) const {
    if (o->type != Type::kTuple && o->type != Type::kList)
      fail(what + " is " + type_name(o->type) + ", not a tuple of ints");
    std::vector<int64_t> v;
    for (const Obj* e : o->items) {
      v.push_back(int_of(e, what));
      if (v.back() < 0) fail(what + " holds the negative number " + std::to_string(v.back()));
    }
    return v;
  }

  // _rebuild_tensor(_v2)(storage, storage_offset, size, stride, ...).
  Obj* rebuild_tensor(const std::vector<Obj*>& a, bool v2) {
    if (a.size() < 4 || (v2 && (a.size() < 6 || a.size() > 7)) || (!v2 && a.size() != 4))
      fail("a tensor rebuilt from " + std::to_string(a.size()) + " arguments");
    if (a[0]->type != Type::kStorage) fail("a tensor over " + std::string(type_name(a[0]->type)));
    Obj* t = make(Type::kTensor);
    t->tensor.storage = static_cast<size_t>(a[0]->i);
    t->tensor.offset = int_of(a[1], "a storage offset");
    if (t->tensor.offset < 0) fail("a negative storage offset");
    t->tensor.shape = ints_of(a[2], "a tensor size");
    t->tensor.stride = ints_of(a[3], "a tensor stride");
    if (t->tensor.shape.size() != t->tensor.stride.size())
      fail("a tensor whose size and stride have different lengths");
    // metadata: {"conj": True} / {"neg": True} would make the values a view that is not stored.
    if (v2 && a.size() == 7 && a[6]->type == Type::kDict)
      for (size_t k = 1; k < a[6]->items.size(); k += 2)
        if (a[6]->items[k]->type == Type::kBool && a[6]->items[k]->i)
          fail("a tensor with conjugate or negative bits set");
    return t;
  }

  void op_reduce() {
    Obj* args = pop();
    Obj* f = pop();
    if (f->type != Type::kGlobal) fail("REDUCE of " + std::string(type_name(f->type)));
    if (args->type != Type::kTuple) fail("REDUCE with " + std::string(type_name(args->type)));
    const auto& a = args->items;
    const std::string& g = f->s;
    if (g == "collections.OrderedDict") {
      if (!a.empty()) fail("OrderedDict built from arguments");
      push(make(Type::kDict));
    } else if (g == "torch._utils._rebuild_tensor_v2" || g == "torch._utils._rebuild_tensor") {
      push(rebuild_tensor(a, g.back() == '2'));
    } else if (g == "torch._utils._rebuild_parameter" ||
               g == "torch._utils._rebuild_parameter_with_state") {
      if (a.size() < 3 || a[0]->type != Type::kTensor) fail("a Parameter without its tensor");
      push(a[0]);
    } else if (g == "torch._tensor._rebuild_from_type_v2") {
      // (func, new_type, args, state): a tensor of type torch.Tensor or Parameter with attributes.
      if (a.size() != 4 || a[0]->type != Type::kGlobal || a[1]->type != Type::kGlobal ||
          a[2]->type != Type::kTuple)
        fail("_rebuild_from_type_v2 with unexpected arguments");
      if (a[1]->s != "torch.Tensor" && a[1]->s != "torch.nn.parameter.Parameter")
        fail("a tensor of type " + a[1]->s);
      const std::string& fn = a[0]->s;
      if (fn != "torch._utils._rebuild_tensor_v2" && fn != "torch._utils._rebuild_tensor")
        fail("_rebuild_from_type_v2 over " + fn);
      push(rebuild_tensor(a[2]->items, fn.back() == '2'));
    } else {
      fail(g + " called as a function");
    }
  }

  // ('storage', storage_type, key, location, numel[, view_metadata]).
  void op_persid() {
    Obj* pid = pop();
    if (!ids_) fail("a persistent id in a pickle of plain values");
    const size_t n = *ids_ == StorageIds::kZip ? 5 : 6;
    if (pid->type != Type::kTuple || pid->items.size() != n)
      fail("a persistent id that is not a " + std::to_string(n) + "-tuple");
    const auto& p = pid->items;
    if (p[0]->type != Type::kStr || p[0]->s != "storage") fail("a persistent id of no storage");
    if (p[1]->type != Type::kGlobal || !storage_dtypes().count(p[1]->s))
      fail("a persistent id without a storage type");
    if (p[2]->type != Type::kStr) fail("a storage key that is not a string");
    if (p[3]->type != Type::kStr) fail("a storage location that is not a string");
    const int64_t numel = int_of(p[4], "a storage size");
    if (numel < 0) fail("a negative storage size");
    if (n == 6 && p[5]->type != Type::kNone)
      fail("a view of another storage (torch before 1.0), which lm-eval does not read");
    const std::string& dtype = storage_dtypes().at(p[1]->s);
    auto [it, fresh] = storage_index_.emplace(p[2]->s, storages_.size());
    if (fresh) {
      storages_.push_back({p[2]->s, dtype, numel});
    } else if (storages_[it->second].dtype != dtype || storages_[it->second].numel != numel) {
      fail("storage " + p[2]->s + " named twice with different types or sizes");
    }
    Obj* s = make(Type::kStorage);
    s->i = static_cast<int64_t>(it->second);
    push(s);
  }

  std::string_view b_;
  const std::string& file_;
  std::optional<StorageIds> ids_;  // nullopt: plain values only
  size_t pos_ = 0, op_at_ = 0;
  std::vector<std::unique_ptr<Obj>> arena_;  // owns every value: cycles and depth cost nothing
  std::vector<Obj*> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint32_t, Obj*> memo_;
  std::vector<PickledStorage> storages_;
  std::map<std::string, size_t> storage_index_;
};

Json to_json(const Obj* o, const Unpickler& u, int depth) {
  if (depth > 32) u.fail("values nested more than 32 levels deep");
  switch (o->type) {
    case Type::kNone:
      return nullptr;
    case Type::kBool:
      return o->i != 0;
    case Type::kInt:
      return o->i;
    case Type::kFloat:
      return o->f;
    case Type::kStr:
      return o->s;
    case Type::kTuple:
    case Type::kList: {
      Json a = Json::array();
      for (const Obj* e : o->items) a.push_back(to_json(e, u, depth + 1));
      return a;
    }
    case Type::kDict: {
      Json d = Json::object();
      for (size_t k = 0; k + 1 < o->items.size(); k += 2) {
        if (o->items[k]->type != Type::kStr) u.fail("a dict key that is not a string");
        d[o->items[k]->s] = to_json(o->items[k + 1], u, depth + 1);
      }
      return d;
    }
    default:
      u.fail(std::string("a plain pickle holding ") + type_name(o->type));
  }
}

}  // namespace tp

}  // namespace

PickledStateDict read_state_dict_pickle(std::string_view bytes, StorageIds ids,
                                        const std::string& file, size_t* end) {
  tp::Unpickler u(bytes, file, ids);
  const tp::Obj* root = u.run();
  if (end) *end = u.end();
  if (root->type != tp::Type::kDict)
    throw UserError(
        std::string("the pickle holds ") + tp::type_name(root->type) + ", not a state dict",
        {file, 0, 0, ""}, "a dict of tensor names to tensors (model.state_dict())");
  PickledStateDict out;
  out.storages = u.storages();
  // A dict keeps a key where it was first set and the value set last.
  std::map<std::string, size_t> at;
  for (size_t k = 0; k + 1 < root->items.size(); k += 2) {
    const tp::Obj* key = root->items[k];
    const tp::Obj* value = root->items[k + 1];
    if (key->type != tp::Type::kStr)
      throw UserError(std::string("a state dict key is ") + tp::type_name(key->type),
                      {file, 0, 0, ""}, "tensor names as strings");
    if (value->type != tp::Type::kTensor)
      throw UserError(
          "state dict entry '" + key->s + "' is " + tp::type_name(value->type) + ", not a tensor",
          {file, 0, 0, key->s}, "a flat state dict of tensors, as save_pretrained writes it");
    PickledTensor t = value->tensor;
    t.name = key->s;
    auto [it, fresh] = at.emplace(key->s, out.tensors.size());
    if (fresh)
      out.tensors.push_back(std::move(t));
    else
      out.tensors[it->second] = std::move(t);
  }
  return out;
}

Json read_plain_pickle(std::string_view bytes, const std::string& file, size_t* end) {
  tp::Unpickler u(bytes, file, std::nullopt);
  const tp::Obj* root = u.run();
  if (end) *end = u.end();
  return tp::to_json(root, u, 0);
}

}  // namespace lmeval::hf
