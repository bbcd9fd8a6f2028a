#!/usr/bin/env python3
"""How much of libtorch 1.13's C++ frontend <ember/torch.h> covers, by name and by call.

Reads libtorch's own headers (Debian's libtorch-dev), lists their public names, and writes one
probe per name: a few lines of C++ that use the name as a libtorch program would (a module and
its Impl, an options setter fed its own getter, a functional called with a tensor and its
FuncOptions, a Tensor method or torch:: function called with arguments of the types libtorch's
declaration takes). All probes of a group go into one file, compiled once with -fsyntax-only
against <ember/torch.h>; the lines the compiler reports errors on are the probes that fail.

  python3 scripts/libtorch_coverage.py --ember-include DIR [DIR...] [--torch-include /usr/include]
         [--out docs/libtorch-coverage.md] [--work DIR]

The groups:
  modules     torch/nn/modules/**.h and torch/nn/options/*.h: every module (holder and Impl),
              every module Options class and every one of its setters (TORCH_ARG)
  functional  torch/nn/functional/*.h: every function (called as libtorch's docs call it: with
              the required arguments, and with its FuncOptions), every FuncOptions class and setter
  optim, data, serialize/utils/types: the public classes and functions of those headers
  tensor      the Tensor methods (ATen's TensorBody.h/TensorBase.h) and torch:: functions
              (ATen/ops/*.h, torch's variable_factories.h) of the families in FAMILIES below,
              every overload, called with its required arguments and with all of them
Overloads over named dimensions (at::Dimname) and the _symint forms are not counted: ember has
no named tensors and no symbolic shapes.
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

# ----------------------------------------------------------------------------- C++ scanning


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    # Preprocessor lines (keep the line count).
    return re.sub(r"^[ \t]*#[^\n]*(\\\n[^\n]*)*", "", text, flags=re.M)


def match_paren(text, i, open_c="(", close_c=")"):
    """Index just past the bracket closing text[i] (which is open_c)."""
    depth = 0
    while i < len(text):
        c = text[i]
        if c == open_c:
            depth += 1
        elif c == close_c:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def split_top(text, sep=","):
    parts, cur, depth = [], "", 0
    for c in text:
        if c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        if c == sep and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += c
    if cur.strip():
        parts.append(cur.strip())
    return parts


class Scope:
    def __init__(self, kind, name, depth, template=False):
        self.kind, self.name, self.depth, self.template = kind, name, depth, template


def scan(text):
    """Walks C++ text; yields (event, scopes, match) for struct/class openings, TORCH_ARGs,
    aliases, TORCH_MODULEs and inline function definitions at namespace scope."""
    text = strip_comments(text)
    scopes = []
    depth = 0
    i = 0
    pat = re.compile(
        r"(?P<ns>\bnamespace\s+(?P<nsname>[\w:]*)\s*\{)"
        r"|(?P<rec>(?P<tmpl>template\s*<[^;{]*?>\s*)?\b(?:struct|class)\s+(?:TORCH_API\s+)?(?P<recname>\w+)\s*(?:final\s*)?(?::[^;{]*)?\{)"
        r"|(?P<arg>\bTORCH_ARG\s*\()"
        r"|(?P<mod>\bTORCH_MODULE\s*\(\s*(?P<modname>\w+)\s*\))"
        r"|(?P<alias>\busing\s+(?P<aliasname>\w+)\s*=\s*(?P<aliasof>[^;]+);)"
        r"|(?P<fn>\binline\s+(?P<ret>[\w:<>,\s*&]+?)\s+(?P<fnname>\w+)\s*\()"
        r"|(?P<open>\{)|(?P<close>\})")
    while True:
        m = pat.search(text, i)
        if not m:
            return
        if m.group("ns"):
            depth += 1
            scopes.append(Scope("namespace", m.group("nsname"), depth))
            i = m.end()
        elif m.group("rec"):
            depth += 1
            scopes.append(Scope("record", m.group("recname"), depth, bool(m.group("tmpl"))))
            yield "record", list(scopes), m
            i = m.end()
        elif m.group("arg"):
            end = match_paren(text, m.end() - 1)
            yield "arg", list(scopes), text[m.end():end - 1]
            i = end
        elif m.group("mod"):
            yield "module", list(scopes), m.group("modname")
            i = m.end()
        elif m.group("alias"):
            yield "alias", list(scopes), (m.group("aliasname"), m.group("aliasof").strip())
            i = m.end()
        elif m.group("fn"):
            pstart = m.end() - 1
            pend = match_paren(text, pstart)
            rest = text[pend:pend + 40]
            if re.match(r"\s*(const\s*)?\{", rest) and scopes and scopes[-1].kind == "namespace":
                yield "function", list(scopes), (m.group("ret").strip(), m.group("fnname"), text[pstart + 1:pend - 1])
            i = m.end()
        elif m.group("open"):
            depth += 1
            scopes.append(Scope("block", "", depth))
            i = m.end()
        else:
            if scopes:
                scopes.pop()
            depth -= 1
            i = m.end()


def ns_of(scopes):
    return "::".join(s.name for s in scopes if s.kind == "namespace" and s.name)


def in_detail(scopes):
    return any(s.kind == "namespace" and s.name in ("detail", "impl") for s in scopes)


# ----------------------------------------------------------------------------- probes


class Probe:
    def __init__(self, group, header, name, lines, note=""):
        self.group, self.header, self.name, self.lines, self.note = group, header, name, lines, note
        self.ok = None
        self.error = ""


PRELUDE = r"""
#include <ember/torch.h>
#include <type_traits>
#include <utility>
#include <vector>
#include <string>
namespace ember_probe {
extern torch::Tensor t;
extern torch::Tensor t2;
extern std::vector<torch::Tensor> tl;
extern std::vector<int64_t> ints;
extern int64_t i64;
extern double dbl;
extern bool flag;
extern torch::Device dev;
extern torch::TensorOptions opts;
extern void* ptr;
"""


def module_probes(root):
    """Modules, module options and their setters."""
    probes = []
    mod_dir = os.path.join(root, "torch/nn/modules")
    opt_dir = os.path.join(root, "torch/nn/options")
    headers = []
    for d, _, files in os.walk(mod_dir):
        headers += [os.path.join(d, f) for f in sorted(files) if f.endswith(".h")]
    for h in sorted(headers):
        rel = os.path.relpath(h, root)
        with open(h) as f:
            text = f.read()
        for ev, scopes, m in scan(text):
            if ev == "module" and m != "M" and not in_detail(scopes):
                probes.append(Probe("modules", rel, "nn::" + m, [
                    "using H = torch::nn::%s; using I = torch::nn::%sImpl;" % (m, m),
                    "static_assert(std::is_base_of<torch::nn::Module, I>::value, \"an nn::Module\");",
                    "static_assert(std::is_same<typename H::ContainedType, I>::value, \"a holder of its Impl\");"]))
    func_opts = []  # (qualified name, header, setters) of the FuncOptions, for the functional group
    for f in sorted(os.listdir(opt_dir)):
        h = os.path.join(opt_dir, f)
        rel = os.path.relpath(h, root)
        with open(h) as fh:
            text = fh.read()
        records = collections.OrderedDict()  # name -> (namespace, template, [setters])
        aliases = []
        for ev, scopes, m in scan(text):
            if in_detail(scopes):
                continue
            if ev == "record" and scopes[-1].name.endswith("Options"):
                records[scopes[-1].name] = (ns_of(scopes), scopes[-1].template, [])
            elif ev == "arg":
                owner = [s for s in scopes if s.kind == "record"]
                if owner and owner[-1].name in records:
                    args = split_top(m)
                    if len(args) == 2:
                        records[owner[-1].name][2].append(args[1])
            elif ev == "alias" and m[0].endswith("Options"):
                aliases.append((ns_of(scopes), m[0], m[1]))
        # The classes users name: non-template records, and every alias.
        named = []
        for name, (ns, tmpl, setters) in records.items():
            if not tmpl:
                named.append((ns, name, setters))
        for ns, name, of in aliases:
            base = re.match(r"(?:[\w:]*::)?(\w+)", of).group(1)
            setters = records[base][2] if base in records else []
            named.append((ns, name, setters if base in records else []))
        for ns, name, setters in named:
            q = ns + "::" + name
            functional = "FuncOptions" in name or "::functional" in ns
            group = "functional" if functional else "modules"
            # An alias of another named class (XFuncOptions = XOptions) counts as the type only.
            aliased_to_named = any(n == name for _, n, of in aliases
                                   if re.match(r"(?:[\w:]*::)?(\w+)$", of) and
                                   re.match(r"(?:[\w:]*::)?(\w+)$", of).group(1) in records and
                                   not records[re.match(r"(?:[\w:]*::)?(\w+)$", of).group(1)][1])
            probes.append(Probe(group, rel, name, ["using O = %s; (void)sizeof(O);" % q]))
            if aliased_to_named:
                continue
            for s in setters:
                probes.append(Probe(group, rel, "%s::%s" % (name, s), [
                    "using O = %s;" % q,
                    "auto f = [](O& o) { o.%s(o.%s()); };" % (s, s),
                    "(void)f;"]))
            if functional:
                func_opts.append(q)
    return probes


# Argument expressions for libtorch's parameter types (inside decltype: never evaluated).
def arg_expr(ty):
    ty = re.sub(r"\s+", " ", ty.replace("&", " & ")).strip()
    base = re.sub(r"\b(const|volatile)\b", "", ty).replace("&", "").strip()
    base = re.sub(r"\s+", "", base)
    base = re.sub(r"(::)?\b(std|c10|at|torch)::", "", base)
    m = re.match(r"(?:c10::|std::)?optional<(.*)>$", base)
    if m:
        return arg_expr(m.group(1))
    table = {
        "Tensor": "t", "TensorBase": "t", "Variable": "t",
        "int64_t": "i64", "int": "i64", "size_t": "i64", "double": "dbl", "float": "dbl", "bool": "flag",
        "Scalar": "dbl",
        "IntArrayRef": "ints", "OptionalIntArrayRef": "ints", "ArrayRef<int64_t>": "ints",
        "vector<int64_t>": "ints", "IntList": "ints",
        "TensorList": "tl", "ArrayRef<Tensor>": "tl", "ITensorListRef": "tl", "vector<Tensor>": "tl",
        "List<c10::optional<Tensor>>": "tl", "List<optional<Tensor>>": "tl",
        "ScalarType": "torch::kFloat", "Dtype": "torch::kFloat",
        "Device": "dev", "TensorOptions": "opts",
        "Layout": "torch::kStrided", "MemoryFormat": "torch::MemoryFormat::Contiguous",
        "string_view": "\"none\"", "string": "\"none\"",
        "c10::string_view": "\"none\"",
        "ArrayRef<double>": "std::vector<double>{1.0}", "vector<double>": "std::vector<double>{1.0}",
        "ArrayRef<indexing::TensorIndex>": "{torch::indexing::Slice(), 0}",
        "initializer_list<indexing::TensorIndex>": "{torch::indexing::Slice(), 0}",
        "caffe2::TypeMeta": "t.dtype()",
        "void*": "ptr",
        "detail::TensorDataContainer": "{{1.0, 2.0}, {3.0, 4.0}}",
    }
    if base in table:
        return table[base]
    if re.match(r"ExpandingArray<\d+>$", base) or re.match(r"ExpandingArrayWithOptionalElem<\d+>$", base):
        return "i64"
    if base.endswith("Options"):
        return None  # handled by the caller (the options class of its namespace)
    return None


def functional_probes(root, option_names):
    probes = []
    fdir = os.path.join(root, "torch/nn/functional")
    for f in sorted(os.listdir(fdir)):
        h = os.path.join(fdir, f)
        rel = os.path.relpath(h, root)
        with open(h) as fh:
            text = fh.read()
        for ev, scopes, m in scan(text):
            if ev != "function" or in_detail(scopes):
                continue
            ret, name, params = m
            if "functional" not in ns_of(scopes):
                continue
            params = split_top(params)
            minimal, full, notes = [], [], []
            bad = False
            for p in params:
                p_nodefault = p.split("=")[0].strip()
                has_default = "=" in p
                mty = re.match(r"(.*?)(\w+)$", p_nodefault)
                ty = mty.group(1).strip() if mty else p_nodefault
                e = arg_expr(ty)
                if e is None:
                    bty = re.sub(r"\b(const)\b|&", "", ty).strip()
                    bty = re.sub(r"^(torch::nn::functional::|functional::|F::)", "", bty)
                    if bty.endswith("Options") and bty in option_names:
                        e = "std::declval<const %s&>()" % option_names[bty]
                    else:
                        notes.append("unmapped type " + ty)
                        bad = True
                        break
                full.append(e)
                if not has_default:
                    minimal.append(e)
            if bad:
                probes.append(Probe("functional", rel, "F::" + name, ["static_assert(false, \"unmapped\");"],
                                    note="; ".join(notes)))
                continue
            lines = ["using R1 = decltype(torch::nn::functional::%s(%s)); (void)sizeof(std::add_pointer_t<R1>);" % (name, ", ".join(minimal))]
            sig = "F::%s(%s)" % (name, ", ".join(re.sub(r"\s+", " ", p.split("=")[0]).strip() for p in params))
            if full != minimal:
                lines.append("using R2 = decltype(torch::nn::functional::%s(%s)); (void)sizeof(std::add_pointer_t<R2>);" % (name, ", ".join(full)))
            probes.append(Probe("functional", rel, sig, lines))
    return probes


def name_probes(root, group, rels, names):
    """Public classes and functions of some headers, by name: type or function exists in torch::."""
    probes = []
    for rel in rels:
        path = os.path.join(root, rel)
        if not os.path.exists(path):
            continue
        with open(path) as fh:
            text = fh.read()
        seen = set()
        for ev, scopes, m in scan(text):
            if in_detail(scopes):
                continue
            ns = ns_of(scopes)
            if not ns.startswith("torch"):
                continue
            if ev == "record" and len([s for s in scopes if s.kind == "record"]) == 1:
                nm = scopes[-1].name
                if nm.startswith("_") or nm in seen:
                    continue
                seen.add(nm)
                probes.append(Probe(group, rel, ns + "::" + nm, ["using %s::%s;" % (ns, nm)]))
            elif ev == "function" and not any(s.kind == "record" for s in scopes):
                nm = m[1]
                if nm.startswith("_") or nm in seen or nm.startswith("operator"):
                    continue
                seen.add(nm)
                probes.append(Probe(group, rel, ns + "::" + nm + "()", ["using %s::%s;" % (ns, nm)]))
    for n in names:
        probes.append(Probe(group, n[0], n[1], n[2]))
    return probes


# The Tensor/torch:: families of issue 34's scope: the names libtorch users call most.
FAMILIES = collections.OrderedDict([
    ("creation", "empty empty_like empty_strided zeros zeros_like ones ones_like full full_like arange range "
                 "linspace logspace eye tensor from_blob scalar_tensor rand rand_like randn randn_like randint "
                 "randint_like randperm new_empty new_zeros new_ones new_full tril_indices triu_indices"),
    ("shape/view", "view view_as reshape reshape_as flatten unflatten squeeze unsqueeze transpose t permute "
                   "expand expand_as repeat repeat_interleave narrow select slice chunk split split_with_sizes "
                   "tensor_split unbind cat concat stack hstack vstack dstack flip fliplr flipud roll rot90 tril "
                   "triu movedim moveaxis swapaxes swapdims contiguous as_strided diag diagonal diag_embed "
                   "unfold tile broadcast_to broadcast_tensors meshgrid ravel atleast_1d atleast_2d"),
    ("indexing", "index index_put_ index_put index_select index_add index_copy index_fill masked_fill "
                 "masked_select masked_scatter gather scatter scatter_add scatter_reduce take take_along_dim "
                 "where nonzero argwhere put_"),
    ("math", "add sub mul div true_divide floor_divide remainder fmod pow neg abs exp exp2 log log2 log10 "
             "log1p expm1 sqrt rsqrt sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh "
             "sigmoid relu sign sgn floor ceil round trunc frac reciprocal square clamp clamp_min clamp_max "
             "clip lerp addcmul addcdiv matmul mm bmm mv dot outer addmm addmv baddbmm addbmm erf erfc "
             "erfinv fmax fmin hypot logaddexp lgamma digamma softmax log_softmax logit xlogy cross "
             "einsum tensordot kron cdist dist square_ nan_to_num"),
    ("reduction", "sum mean prod max min amax amin aminmax argmax argmin std var std_mean var_mean median "
                  "nanmedian mode logsumexp norm all any cumsum cumprod cummax cummin sort argsort topk "
                  "kthvalue count_nonzero nansum nanmean unique_consecutive bincount histc"),
    ("comparison", "eq ne lt le gt ge greater less equal allclose isclose isnan isinf isfinite isposinf "
                   "isneginf maximum minimum logical_and logical_or logical_not logical_xor bitwise_and "
                   "bitwise_or bitwise_xor bitwise_not"),
    ("random", "bernoulli bernoulli_ normal normal_ uniform_ random_ exponential_ multinomial poisson "
               "geometric_ log_normal_ cauchy_"),
    ("type/device", "to type_as cpu double float half bfloat16 long int bool byte char short contiguous item "
                    "data_ptr const_data_ptr numel dim ndimension sizes size strides stride dtype scalar_type "
                    "device is_contiguous requires_grad requires_grad_ detach detach_ grad backward options "
                    "element_size nbytes itemsize is_floating_point is_complex defined copy_ clone "
                    "storage_offset is_same is_cpu is_leaf retain_grad set_requires_grad toType "
                    "is_nonzero is_same_size"),
    ("in-place", "add_ sub_ mul_ div_ pow_ clamp_ clamp_min_ clamp_max_ zero_ fill_ abs_ exp_ log_ sqrt_ "
                 "rsqrt_ neg_ sigmoid_ tanh_ relu_ masked_fill_ index_fill_ index_add_ index_copy_ scatter_ "
                 "scatter_add_ unsqueeze_ squeeze_ t_ transpose_ floor_ ceil_ round_ trunc_ addcmul_ addcdiv_ "
                 "lerp_ sin_ cos_ reciprocal_ sign_ fmod_ remainder_ resize_ copy_ set_ fill_diagonal_ "
                 "tril_ triu_ cumsum_ exp2_ log1p_ expm1_ erf_ sub_ floor_divide_"),
])


def parse_decls(text, cls):
    """Method declarations `ret name(params) const;` (and inline definitions) of a class body."""
    text = strip_comments(text)
    out = collections.defaultdict(list)
    m = re.search(r"class\s+TORCH_API\s+%s\b[^{;]*\{" % cls, text)
    if not m:
        return out
    body_end = match_paren(text, m.end() - 1, "{", "}")
    body = text[m.end():body_end]
    for d in re.finditer(r"(?:^|\n)\s*(?:C10_DEPRECATED[^\n]*\n\s*)?(?:TORCH_API\s+)?(?:inline\s+)?(?:template\s*<[^>]*>\s*)?"
                         r"([\w:<>,\s*&]+?)\s+(\w+)\s*\(", body):
        pstart = d.end() - 1
        pend = match_paren(body, pstart)
        tail = body[pend:pend + 30]
        if not re.match(r"\s*(const)?\s*(&|&&)?\s*(;|\{|noexcept|override)", tail):
            continue
        ret = d.group(1).strip()
        if ret in ("return", "else", "new", "delete") or "return" in ret.split():
            continue
        out[d.group(2)].append((ret, body[pstart + 1:pend - 1], "template" in d.group(0)))
    return out


def parse_free_functions(root, name):
    out = []
    path = os.path.join(root, "ATen/ops/%s.h" % name)
    paths = [path] if os.path.exists(path) else []
    for p in paths:
        with open(p) as fh:
            text = strip_comments(fh.read())
        for d in re.finditer(r"\binline\s+([\w:<>,\s*&]+?)\s+(%s)\s*\(" % re.escape(name), text):
            pstart = d.end() - 1
            pend = match_paren(text, pstart)
            ns_pos = text.rfind("namespace", 0, d.start())
            ns = re.match(r"namespace\s+(\w+)", text[ns_pos:]).group(1) if ns_pos >= 0 else ""
            if ns != "at":
                continue
            out.append((d.group(1).strip(), text[pstart + 1:pend - 1], False))
    return out


def parse_factories(root):
    path = os.path.join(root, "torch/csrc/autograd/generated/variable_factories.h")
    out = collections.defaultdict(list)
    if not os.path.exists(path):
        return out
    with open(path) as fh:
        text = strip_comments(fh.read())
    for d in re.finditer(r"\binline\s+(at::Tensor)\s+(\w+)\s*\(", text):
        pstart = d.end() - 1
        pend = match_paren(text, pstart)
        out[d.group(2)].append((d.group(1), text[pstart + 1:pend - 1], False))
    return out


def call_probe(callee, params, method):
    """Lines of a probe calling callee with the required, then all, arguments."""
    minimal, full = [], []
    for p in split_top(params):
        p_nodefault = p.split("=")[0].strip()
        mty = re.match(r"(.*?)(\w+)$", p_nodefault)
        ty = mty.group(1).strip() if mty else p_nodefault
        if "Dimname" in ty or "SymInt" in ty:
            return None, "named dims / SymInt"
        if "c10::List<" in ty:
            return None, "c10::List: the dispatcher's form; programs call the TensorIndex form"
        if "Generator" in ty:
            e = "torch::Generator()"
        elif "Storage" in ty or "Stream" in ty or "QScheme" in ty or "Quantizer" in ty:
            return None, "quantized/storage/stream"
        elif "std::function" in ty or "deleter" in ty.lower():
            e = "std::declval<void (*)(void*)>()"
        else:
            e = arg_expr(ty)
        if e is None:
            return ["static_assert(false, \"unmapped\");"], "unmapped type " + ty
        full.append(e)
        if "=" not in p:
            minimal.append(e)
    lines = ["using R1 = decltype(%s(%s)); (void)sizeof(std::add_pointer_t<R1>);" % (callee, ", ".join(minimal))]
    if full != minimal:
        lines.append("using R2 = decltype(%s(%s)); (void)sizeof(std::add_pointer_t<R2>);" % (callee, ", ".join(full)))
    return lines, ""


def tensor_probes(root):
    probes = []
    with open(os.path.join(root, "ATen/core/TensorBody.h")) as fh:
        methods = parse_decls(fh.read(), "Tensor")
    with open(os.path.join(root, "ATen/core/TensorBase.h")) as fh:
        for k, v in parse_decls(fh.read(), "TensorBase").items():
            if k not in methods:
                methods[k] = v
    factories = parse_factories(root)
    skipped = []
    for fam, names in FAMILIES.items():
        for name in names.split():
            decls = methods.get(name, [])
            seen = set()
            for ret, params, templ in decls:
                key = ("m", re.sub(r"\s+", "", params))
                if key in seen:
                    continue
                seen.add(key)
                if templ:
                    # data_ptr<T>(), item<T>(): the typed forms.
                    lines = ["using R = decltype(t.%s<float>()); (void)sizeof(std::add_pointer_t<R>);" % name]
                    note = ""
                else:
                    lines, note = call_probe("t." + name, params, True)
                if lines is None:
                    skipped.append(("Tensor::%s(%s)" % (name, params), note))
                    continue
                probes.append(Probe("tensor:" + fam, "ATen/core/TensorBody.h",
                                    "Tensor::%s(%s)" % (name, re.sub(r"\s+", " ", params)), lines, note))
            frees = factories.get(name) or parse_free_functions(root, name)
            for ret, params, templ in frees:
                key = ("f", re.sub(r"\s+", "", params))
                if key in seen:
                    continue
                seen.add(key)
                lines, note = call_probe("torch::" + name, params, False)
                if lines is None:
                    skipped.append(("torch::%s(%s)" % (name, params), note))
                    continue
                probes.append(Probe("tensor:" + fam, "ATen/ops/%s.h" % name,
                                    "torch::%s(%s)" % (name, re.sub(r"\s+", " ", params)), lines, note))
    return probes, skipped


# ----------------------------------------------------------------------------- compiling


def run_probes(probes, includes, work, tag):
    src = os.path.join(work, "probe_%s.cpp" % re.sub(r"\W", "_", tag))
    lines = [PRELUDE]
    owner = {}
    for n, p in enumerate(probes):
        lines.append("inline void probe_%d() {" % n)
        for line in p.lines:
            owner[len("\n".join(lines).split("\n")) + 1] = n
            lines.append("  " + line)
        lines.append("}")
    lines.append("}  // namespace ember_probe")
    with open(src, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    cmd = ["g++", "-std=c++17", "-fsyntax-only", "-fmax-errors=0", "-w"] + \
          ["-I" + i for i in includes] + [src]
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    failed = {}
    for m in re.finditer(r"^%s:(\d+):\d+: error: (.*)$" % re.escape(src), res.stdout, flags=re.M):
        ln = int(m.group(1))
        # The probe whose lines hold ln (the nearest owner line at or above it).
        k = ln
        while k > 0 and k not in owner:
            k -= 1
        if k in owner and abs(k - ln) < 3:
            failed.setdefault(owner[k], m.group(2))
    if res.returncode != 0 and not failed:
        sys.stderr.write(res.stdout[-4000:])
        raise SystemExit("probe file %s failed to compile outside any probe" % src)
    for n, p in enumerate(probes):
        p.ok = n not in failed
        p.error = failed.get(n, "")


# Why what is still missing is missing (matched on the probe's name; first match wins).
REASONS = [
    (r"Generator|bernoulli|normal\(double mean|poisson|random_|exponential_|geometric_|cauchy_",
     "ember has one global generator (manual_seed), no torch::Generator objects"),
    (r"bitwise_", "the bitwise ops are not implemented yet"),
    (r"dimname|namedshape", "named dimensions: ember has none"),
    (r"resize_|set_\(", "ember tensors do not replace their storage in place"),
    (r"ParamState|LBFGS", "ember's optimizers keep their state in their own classes; LBFGS is not implemented"),
    (r"Archive", "ember's checkpoints are safetensors (torch::save / torch::load), not libtorch's archives"),
    (r"_interp_output_size", "an internal helper of libtorch's interpolate, not part of the API programs call"),
    (r"backward\(", "backward's inputs argument is not implemented"),
]


def reason_of(name):
    for pat, why in REASONS:
        if re.search(pat, name):
            return why
    return "not implemented yet"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ember-include", nargs="+", required=True)
    ap.add_argument("--torch-include", default="/usr/include")
    ap.add_argument("--out", default="docs/libtorch-coverage.md")
    ap.add_argument("--work", default=None)
    a = ap.parse_args()
    api = os.path.join(a.torch_include, "torch/csrc/api/include")
    if not os.path.isdir(os.path.join(api, "torch/nn")):
        raise SystemExit("libtorch's headers are not under %s (apt-get install libtorch-dev)" % a.torch_include)
    work = a.work or tempfile.mkdtemp(prefix="libtorch_cov_")
    os.makedirs(work, exist_ok=True)

    probes = module_probes(api)
    option_names = {}
    for p in probes:
        if p.lines[0].startswith("using O = ") and "::" not in p.name:
            option_names[p.name] = p.lines[0][len("using O = "):].split(";")[0]
    probes += functional_probes(api, option_names)
    probes += name_probes(api, "optim", sorted(
        os.path.relpath(os.path.join(d, f), api) for d, _, fs in os.walk(os.path.join(api, "torch/optim"))
        for f in fs if f.endswith(".h")), [])
    probes += name_probes(api, "data", sorted(
        os.path.relpath(os.path.join(d, f), api) for d, _, fs in os.walk(os.path.join(api, "torch/data"))
        for f in fs if f.endswith(".h") and "/detail/" not in d), [])
    probes += name_probes(api, "serialize/utils/types",
                          ["torch/serialize.h", "torch/utils.h", "torch/types.h",
                           "torch/serialize/archive.h", "torch/serialize/input-archive.h",
                           "torch/serialize/output-archive.h"], [])
    tprobes, skipped = tensor_probes(a.torch_include)
    probes += tprobes

    includes = a.ember_include
    by_group = collections.OrderedDict()
    for p in probes:
        by_group.setdefault(p.group.split(":")[0], []).append(p)
    for g, ps in by_group.items():
        run_probes(ps, includes, work, g)

    # ---- report
    def pct(a_, b_):
        return "%.1f%%" % (100.0 * a_ / b_) if b_ else "-"

    groups = collections.OrderedDict()
    for p in probes:
        groups.setdefault(p.group, []).append(p)
    out = []
    out.append("# libtorch 1.13 C++ API coverage of `<ember/torch.h>`\n")
    out.append("Generated by `scripts/libtorch_coverage.sh` (do not edit). Each name of libtorch's headers is "
               "a probe: C++ that uses it as a libtorch program would, compiled against `<ember/torch.h>`. "
               "A probe passes when it compiles. See the script's header for what each probe does.\n")
    out.append("| group | probes | pass | coverage |")
    out.append("|---|---|---|---|")
    totals = collections.OrderedDict()
    for g, ps in groups.items():
        k = "tensor (Tensor methods and torch:: functions)" if g.startswith("tensor:") else g
        t_ = totals.setdefault(k, [0, 0])
        t_[0] += len(ps)
        t_[1] += sum(p.ok for p in ps)
    for k, (n, ok) in totals.items():
        out.append("| %s | %d | %d | %s |" % (k, n, ok, pct(ok, n)))
    out.append("")
    out.append("Tensor families:\n")
    out.append("| family | probes | pass | coverage |")
    out.append("|---|---|---|---|")
    for g, ps in groups.items():
        if g.startswith("tensor:"):
            ok = sum(p.ok for p in ps)
            out.append("| %s | %d | %d | %s |" % (g[7:], len(ps), ok, pct(ok, len(ps))))
    out.append("")
    out.append("## Missing, by header\n")
    for g, ps in groups.items():
        miss = [p for p in ps if not p.ok]
        if not miss:
            continue
        out.append("### %s (%d missing)\n" % (g, len(miss)))
        cur = None
        for p in miss:
            if p.header != cur:
                cur = p.header
                out.append("- `%s`:" % cur)
            reason = p.note or p.error
            reason = re.sub(r"\s+", " ", reason)[:140]
            out.append("  - `%s`: %s (compiler: %s)" % (p.name, reason_of(p.name), reason.replace("|", "\\|")))
        out.append("")
    out.append("## Not counted\n")
    out.append("Overloads over named dimensions (`at::Dimname`), symbolic sizes (`SymInt`), quantizers, "
               "storages and streams: ember has none of them. The `c10::List<optional<Tensor>>` forms of "
               "index/index_put: the dispatcher's signature, which programs reach through the "
               "`torch::indexing` forms counted above.\n")
    for s, note in skipped:
        out.append("- `%s` (%s)" % (re.sub(r"\s+", " ", s), note))
    with open(a.out, "w") as fh:
        fh.write("\n".join(out) + "\n")
    for k, (n, ok) in totals.items():
        print("%-48s %5d / %5d  %s" % (k, ok, n, pct(ok, n)))


if __name__ == "__main__":
    main()
