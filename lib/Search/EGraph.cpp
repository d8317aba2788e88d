//===- EGraph.cpp - An e-graph over tg ------------------------------------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "loom/Search/EGraph.h"

#include "loom/Search/Hash.h"

#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace loom;
using namespace loom::search;

uint64_t EGraph::keyHash(OpId op, ArrayRef<ClassId> children) const {
  uint64_t h = hashMix(0x7a3c1f05ULL, op);
  for (ClassId c : children)
    h = hashMix(h, c);
  return h;
}

void EGraph::canonicalizeNode(ENode &n) const {
  for (ClassId &c : n.children)
    c = find(c);
  if (n.children.size() == 2 && sc.op(n.op).commutative &&
      n.children[1] < n.children[0])
    std::swap(n.children[0], n.children[1]);
}

std::optional<uint32_t> EGraph::lookup(const ENode &n) const {
  auto it = hashcons.find(keyHash(n.op, n.children));
  if (it == hashcons.end())
    return std::nullopt;
  for (uint32_t id : it->second) {
    const ENode &m = nodes[id];
    if (!m.dead && m.op == n.op && m.children == n.children)
      return id;
  }
  return std::nullopt;
}

void EGraph::insertKey(uint32_t id) {
  ENode &n = nodes[id];
  n.hash = keyHash(n.op, n.children);
  hashcons[n.hash].push_back(id);
}

void EGraph::eraseKey(uint32_t id) {
  auto it = hashcons.find(nodes[id].hash);
  if (it == hashcons.end())
    return;
  auto &bucket = it->second;
  for (size_t k = 0; k < bucket.size(); ++k)
    if (bucket[k] == id) {
      bucket[k] = bucket.back();
      bucket.pop_back();
      break;
    }
  if (bucket.empty())
    hashcons.erase(it);
}

ClassId EGraph::find(ClassId c) const {
  ClassId root = c;
  while (parent[root] != root)
    root = parent[root];
  while (parent[c] != root) {
    ClassId next = parent[c];
    parent[c] = root;
    c = next;
  }
  return root;
}

ClassId EGraph::add(OpId op, ArrayRef<ClassId> children, ArrayRef<Type> types,
                    double cost, LocationAttr loc, int32_t origin) {
  ENode n;
  n.op = op;
  n.children.assign(children.begin(), children.end());
  canonicalizeNode(n);
  if (std::optional<uint32_t> existing = lookup(n))
    return find(nodes[*existing].cls);

  const OpInfo &info = sc.op(op);
  ClassId c = classes.size();
  uint32_t id = nodes.size();
  n.cls = c;
  n.origin = origin;
  n.cost = cost;
  n.stamp = epoch;
  EClass ec;
  ec.stamp = epoch;
  ec.nodes.push_back(id);
  ec.types.assign(types.begin(), types.end());
  ec.loc = loc;
  ec.tuple = info.isOp() && !info.numResults;
  ec.foldable = info.leaf;
  bool tuple = ec.tuple;
  classes.push_back(std::move(ec));
  parent.push_back(c);
  ++numLiveClasses;
  nodes.push_back(std::move(n));
  insertKey(id);
  for (size_t k = 0; k < nodes[id].children.size(); ++k) {
    ClassId child = nodes[id].children[k];
    bool dup = false;
    for (size_t j = 0; j < k; ++j)
      dup |= nodes[id].children[j] == child;
    if (!dup)
      classes[child].parents.push_back(id);
  }
  if (info.isOp())
    byShapeClass[info.shapeClass].push_back(id);
  if (tuple)
    for (unsigned i = 0; i < types.size(); ++i)
      add(sc.projOp(i), {c}, {types[i]}, 0, loc, origin);
  return c;
}

ClassId EGraph::projClass(ClassId tuple, unsigned i) const {
  ENode key;
  key.op = sc.projOp(i);
  key.children.push_back(find(tuple));
  std::optional<uint32_t> n = lookup(key);
  assert(n && "every result of a tuple class has a projection");
  return find(nodes[*n].cls);
}

ClassId EGraph::result(uint32_t n, unsigned i) const {
  ClassId c = find(nodes[n].cls);
  if (!classes[c].tuple)
    return c;
  return projClass(c, i);
}

bool EGraph::isFoldable(uint32_t id) const {
  const ENode &n = nodes[id];
  const OpInfo &info = sc.op(n.op);
  if (info.leaf)
    return true;
  if (info.isArg() || n.children.empty())
    return false;
  for (ClassId c : n.children)
    if (!classes[find(c)].foldable)
      return false;
  return true;
}

SmallVector<ClassId, 2> EGraph::addGraph(const TermGraph &g) {
  std::vector<SmallVector<ClassId, 1>> classOf(g.nodes.size());
  for (auto [i, node] : llvm::enumerate(g.nodes)) {
    SmallVector<ClassId, 3> children;
    for (ValueRef v : node.operands)
      children.push_back(classOf[v.node][v.result]);
    ClassId c = add(node.op, children, node.types, node.cost, node.loc, -1);
    if (classes[find(c)].tuple) {
      for (unsigned r = 0; r < node.types.size(); ++r)
        classOf[i].push_back(projClass(c, r));
    } else {
      classOf[i].push_back(c);
    }
  }
  SmallVector<ClassId, 2> roots;
  for (ValueRef out : g.outputs)
    roots.push_back(find(classOf[out.node][out.result]));
  return roots;
}

std::vector<int32_t> EGraph::choiceOf(const TermGraph &g) const {
  std::vector<int32_t> choice(classes.size(), -1);
  std::vector<SmallVector<ClassId, 1>> classOf(g.nodes.size());
  auto choose = [&](ENode key) -> std::optional<ClassId> {
    canonicalizeNode(key);
    std::optional<uint32_t> n = lookup(key);
    if (!n)
      return std::nullopt;
    ClassId c = find(nodes[*n].cls);
    choice[c] = *n;
    return c;
  };
  for (auto [i, node] : llvm::enumerate(g.nodes)) {
    ENode key;
    key.op = node.op;
    for (ValueRef v : node.operands)
      key.children.push_back(classOf[v.node][v.result]);
    std::optional<ClassId> c = choose(key);
    if (!c)
      return {};
    if (!classes[*c].tuple) {
      classOf[i].push_back(*c);
      continue;
    }
    for (unsigned r = 0; r < node.types.size(); ++r) {
      ENode proj;
      proj.op = sc.projOp(r);
      proj.children.push_back(*c);
      std::optional<ClassId> pc = choose(proj);
      if (!pc)
        return {};
      classOf[i].push_back(*pc);
    }
  }
  return choice;
}

bool EGraph::merge(ClassId a, ClassId b) {
  a = find(a);
  b = find(b);
  if (a == b)
    return false;
  if (classes[a].types != classes[b].types)
    return false; // never merge values of different types
  if (classes[a].nodes.size() + classes[a].parents.size() <
      classes[b].nodes.size() + classes[b].parents.size())
    std::swap(a, b);
  parent[b] = a;
  EClass &into = classes[a], &from = classes[b];
  into.nodes.append(from.nodes.begin(), from.nodes.end());
  into.parents.append(from.parents.begin(), from.parents.end());
  into.foldable |= from.foldable;
  into.stamp = epoch;
  if (!into.loc)
    into.loc = from.loc;
  from.nodes.clear();
  from.parents.clear();
  --numLiveClasses;
  pending.push_back(a);
  return true;
}

void EGraph::repair(ClassId c) {
  SmallVector<uint32_t, 8> ps;
  std::swap(ps, classes[c].parents);
  for (uint32_t p : ps) {
    if (nodes[p].dead)
      continue;
    eraseKey(p);
    canonicalizeNode(nodes[p]);
    if (std::optional<uint32_t> q = lookup(nodes[p])) {
      // Congruent to an existing node: one of them suffices.
      nodes[p].dead = true;
      ++numDead;
      merge(nodes[p].cls, nodes[*q].cls);
    } else {
      insertKey(p);
    }
  }
  EClass &root = classes[find(c)];
  for (uint32_t p : ps)
    if (!nodes[p].dead && !llvm::is_contained(root.parents, p))
      root.parents.push_back(p);
}

void EGraph::rebuild() {
  while (!pending.empty()) {
    std::vector<ClassId> todo;
    std::swap(todo, pending);
    llvm::DenseSet<ClassId> done;
    for (ClassId c : todo) {
      c = find(c);
      if (done.insert(c).second)
        repair(c);
    }
  }
  // Drop dead nodes from the class and shape-class lists.
  for (size_t c = 0; c < classes.size(); ++c) {
    if (find(c) != c)
      continue;
    auto &list = classes[c].nodes;
    llvm::erase_if(list, [&](uint32_t n) { return nodes[n].dead; });
    for (uint32_t n : list)
      nodes[n].cls = c;
  }
  for (auto &[cls, list] : byShapeClass)
    llvm::erase_if(list, [&](uint32_t n) { return nodes[n].dead; });
  // Foldability: a class is foldable when one of its nodes computes on
  // foldable classes only.
  bool changed = true;
  while (changed) {
    changed = false;
    for (uint32_t n = 0; n < nodes.size(); ++n) {
      if (nodes[n].dead)
        continue;
      EClass &ec = classes[find(nodes[n].cls)];
      if (!ec.foldable && isFoldable(n)) {
        ec.foldable = true;
        changed = true;
      }
    }
  }
}

std::vector<std::vector<uint32_t>> EGraph::deepStamps(unsigned levels) const {
  std::vector<std::vector<uint32_t>> d(levels + 1);
  d[0].assign(classes.size(), 0);
  for (ClassId c = 0; c < classes.size(); ++c)
    if (parent[c] == c)
      d[0][c] = classes[c].stamp;
  for (unsigned k = 1; k <= levels; ++k) {
    d[k] = d[0];
    for (ClassId c = 0; c < classes.size(); ++c) {
      if (parent[c] != c)
        continue;
      uint32_t v = d[k][c];
      for (uint32_t n : classes[c].nodes)
        for (ClassId child : nodes[n].children)
          v = std::max(v, d[k - 1][find(child)]);
      d[k][c] = v;
    }
  }
  return d;
}
