// The group-order fuzzer: random programs of task groups, run under roost and checked against a serial
// model of the same program. Each node of a random tree runs a random interleaving of up to three task
// groups' lives (open with or without hints, spawns of every kind, waits at any point, destruction without
// a wait, reopening), beside inline calls, parallel_invoke, parallel_for and parallel_reduce, with compute
// declared to the simulator and memory touched; nodes throw. What it checks: every node runs exactly once,
// every join sees its children done with their exact results, every exception reaches where the model says.
// It found the adws-ml stalls of groups joined out of the order they opened and of work left where no
// worker looked (a worker pulled down, a head moved down); tests/CMakeLists.txt replays those seeds.
//
//   group_order_fuzz SEED TREES RUNS [MAX_NODES]   trees SEED.0 .. SEED.TREES-1, each run RUNS times on one
//                                                  runtime (what a run leaves behind meets the next one);
//                                                  the runtime is configured from ROOST_* as usual
//   group_order_fuzz --sweep FROM TO               seeds FROM..TO over every scheduler and five simulated
//                                                  machines (1 to 64 workers), 12 trees of 3 runs each
//
// ROOST_FUZZ_TREE=k runs tree k only; ROOST_FUZZ_DUMP=1 prints each tree; ROOST_FUZZ_SAVE=file and
// ROOST_FUZZ_LOAD=file write and read a tree in a text form (for minimising a failure). A failure prints
// the seed, tree and run and exits with status 3; a stall ends in the simulator's "every simulated worker is
// blocked", or in the test's timeout where the workers spin.
#include <roost/roost.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <vector>

using u64 = std::uint64_t;
static u64 g_seed;
static int g_tree, g_run;
#define FUZZ_FAIL(...)                                                                         \
  do {                                                                                     \
    std::fprintf(stderr, "FAIL seed=%llu tree=%d run=%d: ", (unsigned long long)g_seed, g_tree, g_run); \
    std::fprintf(stderr, __VA_ARGS__);                                                     \
    std::fprintf(stderr, "\n");                                                            \
    std::fflush(stderr);                                                                   \
    std::_Exit(3);                                                                         \
  } while (0)

// splitmix64's finalizer. Every tree follows from it: the seeds the tests replay need it unchanged.
static inline u64 mix(u64 x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

struct Ex {  // what a node throws: its id
  int origin;
};

// A node's program is a list of operations on its (at most three) task group slots and its children.
// OPEN: construct the slot's group (plain, total work, or total work and data size); SPAWN: one of the six
// run/run_if forms; WAIT; CLOSE: destroy without wait; INVOKE, PFOR, PRED: parallel_invoke (or roost::join of
// two, every other node), parallel_for, parallel_reduce over children; INLINE: call a child directly.
enum OpKind { OPEN, SPAWN, WAIT, CLOSE, INVOKE, PFOR, PRED, INLINE };
struct Node;
struct Op {
  OpKind k;
  int g = 0;
  // OPEN
  int gkind = 0;  // 0 plain, 1 total, 2 total+bytes
  double total = 0, bytes = 0;
  // SPAWN
  Node* child = nullptr;
  int mode = 0;  // 0 run(f) 1 run(f,w) 2 run_if(false,f) 3 run_if(true,f,w) 4 run_if(false,f,w) 5 run_if(true,f)
  double w = 0;
  bool big = false;
  // INVOKE/PFOR/PRED
  std::vector<Node*> kids;
  int n = 0, grain = 1;
  // expected at WAIT/CLOSE/INVOKE/PFOR/PRED/INLINE
  bool expThr = false;
  std::vector<int> ids;
  std::vector<int> epochKids;  // WAIT/CLOSE: children whose done flag must be set
  u64 expRed = 0;
};
struct Node {
  int id = 0;
  int depth = 0;
  u64 ops_compute = 0;
  std::size_t touch_off = 0, touch_bytes = 0;
  bool selfThrow = false;
  std::vector<Op> ops;
  std::vector<Node*> allKids;
  // model
  bool thr = false;
  std::vector<int> ids;
  u64 expRes = 0;
};

static std::vector<std::unique_ptr<Node>> g_nodes;
static std::atomic<int>* g_count = nullptr;
static u64* g_res = nullptr;
static int* g_done = nullptr;
static std::atomic<u64> g_sum{0};
static unsigned char* g_buf = nullptr;
static const std::size_t kBuf = 4u << 20;
static bool f_dump;

struct Rng {
  std::mt19937_64 e;
  explicit Rng(u64 s) : e(s) {}
  u64 operator()(u64 n) { return n ? e() % n : 0; }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(e) < p; }
};

static int g_budget;
static int g_maxdepth;

static double pick_total(Rng& r, int nkids) {
  switch (r(8)) {
    case 0: return 0;
    case 1: return nkids;
    case 2: return nkids + 1;
    case 3: return 1;
    case 4: return 0.5;
    case 5: return 1000;
    case 6: return double(r(20));
    default: return nkids * 3.0 + 2;
  }
}
static double pick_bytes(Rng& r) {
  static const double v[] = {0, 1, 64, 4096, 100e3, 256 * 1024.0, 300e3, 512 * 1024.0, 600e3, 1 << 20,
                             1.5 * (1 << 20), 2 << 20, 3 << 20, 6 << 20, 7 << 20, 32 << 20, 40 << 20, 1e9, 1e12, 1e15};
  return v[r(sizeof v / sizeof v[0])];
}
static double pick_w(Rng& r) {
  static const double v[] = {0, 0.5, 1, 1, 2, 3, 10, 100};
  return v[r(sizeof v / sizeof v[0])];
}

static Node* gen(Rng& r, int depth);

static std::vector<Node*> gen_kids(Rng& r, int depth, int k) {
  std::vector<Node*> v;
  for (int i = 0; i < k; ++i) v.push_back(gen(r, depth + 1));
  return v;
}

static Node* gen(Rng& r, int depth) {
  auto up = std::make_unique<Node>();
  Node* n = up.get();
  n->id = int(g_nodes.size());
  g_nodes.push_back(std::move(up));
  n->depth = depth;
  --g_budget;
  n->ops_compute = r.chance(0.3) ? 0 : r(100001);
  if (r.chance(0.08)) {
    n->touch_bytes = 64 + r(128 * 1024);
    n->touch_off = r(kBuf - n->touch_bytes);
  }
  n->selfThrow = r.chance(0.06);
  if (depth >= g_maxdepth || g_budget <= 0) return n;
  double p_leaf = depth == 0 ? 0.0 : 0.15 + 0.1 * depth;
  if (r.chance(p_leaf)) return n;
  int ngroups = int(r(4));
  // per-group event sequences
  std::vector<std::vector<Op>> seqs(ngroups);
  for (int g = 0; g < ngroups; ++g) {
    auto& s = seqs[g];
    int reopen = 0;
  again: {
      int nk = int(r(5));
      Op o{OPEN};
      o.g = g;
      o.gkind = int(r(3));
      o.total = pick_total(r, nk);
      o.bytes = pick_bytes(r);
      s.push_back(o);
      for (int i = 0; i < nk; ++i) {
        if (g_budget <= 0) break;
        Op sp{SPAWN};
        sp.g = g;
        sp.child = gen(r, depth + 1);
        sp.mode = int(r(6));
        if (r.chance(0.5) && sp.mode == 3) sp.mode = 1;
        sp.w = pick_w(r);
        sp.big = r.chance(0.15);
        s.push_back(sp);
        if (r.chance(0.15)) {
          Op w{WAIT};
          w.g = g;
          s.push_back(w);
        }
      }
      int fin = int(r(3));  // 0 wait, 1 destructor, 2 close
      if (fin == 0) {
        Op w{WAIT};
        w.g = g;
        s.push_back(w);
        if (r.chance(0.1)) s.push_back(w);  // second wait, nothing to join
      } else if (fin == 2) {
        Op c{CLOSE};
        c.g = g;
        s.push_back(c);
        if (reopen++ == 0 && r.chance(0.4)) goto again;
      }
    }
  }
  // other ops
  std::vector<Op> others;
  int nother = int(r(3));
  for (int i = 0; i < nother && g_budget > 0; ++i) {
    int k = int(r(4));
    if (k == 0) {
      Op o{INLINE};
      o.child = gen(r, depth + 1);
      others.push_back(o);
    } else if (k == 1) {
      Op o{INVOKE};
      o.kids = gen_kids(r, depth, 2 + int(r(3)));
      others.push_back(o);
    } else {
      Op o{k == 2 ? PFOR : PRED};
      int nk = int(r(4));
      o.kids = gen_kids(r, depth, nk);
      o.n = nk + int(r(6));
      if (o.n == 0) o.n = int(r(2));
      o.grain = 1 + int(r(3));
      others.push_back(o);
    }
  }
  // merge: random interleaving preserving per-sequence order
  std::vector<std::size_t> pos(ngroups, 0);
  std::size_t opos = 0;
  for (;;) {
    std::vector<int> cand;
    for (int g = 0; g < ngroups; ++g)
      if (pos[g] < seqs[g].size()) cand.push_back(g);
    if (opos < others.size()) cand.push_back(-1);
    if (cand.empty()) break;
    int c = cand[r(cand.size())];
    if (c < 0) n->ops.push_back(std::move(others[opos++]));
    else n->ops.push_back(std::move(seqs[c][pos[c]++]));
  }
  for (auto& o : n->ops) {
    if (o.child) n->allKids.push_back(o.child);
    for (Node* k : o.kids) n->allKids.push_back(k);
  }
  return n;
}

// ---------------- model (serial) ----------------
static void add_ids(std::vector<int>& dst, const std::vector<int>& src) { dst.insert(dst.end(), src.begin(), src.end()); }

static u64 red_value(const Op& o, int i) {
  if (i < int(o.kids.size())) return o.kids[i]->expRes;
  return mix(u64(i) * 7919 + 13);
}

static void model(Node* n) {
  for (Node* k : n->allKids) model(k);
  struct S {
    bool alive = false, has = false;
    std::vector<int> pend, kids;
  } s[3];
  for (auto& o : n->ops) {
    switch (o.k) {
      case OPEN: if (!s[o.g].alive) { s[o.g] = S{}; s[o.g].alive = true; } break;
      case SPAWN:
        if (o.child->thr) { s[o.g].has = true; add_ids(s[o.g].pend, o.child->ids); }
        s[o.g].kids.push_back(o.child->id);
        break;
      case WAIT:
      case CLOSE:
        if (!s[o.g].alive) { o.expThr = false; o.ids.clear(); o.epochKids.clear(); break; }
        o.expThr = s[o.g].has;
        o.ids = s[o.g].pend;
        o.epochKids = s[o.g].kids;
        s[o.g].has = false; s[o.g].pend.clear(); s[o.g].kids.clear();
        if (o.k == CLOSE) s[o.g].alive = false;
        break;
      case INLINE:
        o.expThr = o.child->thr;
        o.ids = o.child->ids;
        break;
      case INVOKE: case PFOR: case PRED:
        o.expThr = false;
        for (Node* k : o.kids) if (k->thr) { o.expThr = true; add_ids(o.ids, k->ids); }
        if (o.k == PFOR || o.k == PRED) {
          // indices >= n are never run: not generated that way (n >= kids.size())
        }
        if (o.k == PRED) {
          u64 v = 0;
          for (int i = 0; i < o.n; ++i) v += red_value(o, i);
          o.expRed = v;
        }
        break;
    }
  }
  n->thr = false;
  n->ids.clear();
  if (n->selfThrow) {
    n->thr = true;
    n->ids = {n->id};
  } else {
    for (int g = 2; g >= 0; --g)
      if (s[g].alive && s[g].has) { n->thr = true; n->ids = s[g].pend; break; }
  }
  u64 r = mix(u64(n->id));
  for (Node* k : n->allKids) r = r * 3 + k->expRes;
  n->expRes = r;
}

// ---------------- interpreter ----------------
static void run_node(const Node* n);

static void check_exc(const char* what, const Node* n, const Op& o, int got) {
  if (!o.expThr) {
    if (got != -1) FUZZ_FAIL("node %d %s: unexpected exception origin %d", n->id, what, got);
    return;
  }
  if (got == -1) FUZZ_FAIL("node %d %s: expected an exception, got none", n->id, what);
  for (int i : o.ids) if (i == got) return;
  FUZZ_FAIL("node %d %s: exception origin %d not among the expected", n->id, what, got);
}
static void check_done(const Node* n, const char* what, int kid) {
  if (g_done[kid] != 1) FUZZ_FAIL("node %d %s: child %d not done after join", n->id, what, kid);
  if (g_res[kid] != g_nodes[kid]->expRes) FUZZ_FAIL("node %d %s: child %d result wrong", n->id, what, kid);
}

struct Slot {
  alignas(roost::task_group) unsigned char buf[sizeof(roost::task_group)];
  bool alive = false;
  roost::task_group* g() { return std::launder(reinterpret_cast<roost::task_group*>(buf)); }
  ~Slot() noexcept(false) {
    if (alive) {
      alive = false;
      g()->~task_group();
    }
  }
};

static int call_kid(const Node* k) {
  try {
    run_node(k);
  } catch (const Ex& e) {
    return e.origin;
  }
  return -1;
}

template <class F>
static void do_spawn(roost::task_group& tg, const Op& o, F&& f) {
  switch (o.mode) {
    case 0: tg.run(std::forward<F>(f)); break;
    case 1: tg.run(std::forward<F>(f), o.w); break;
    case 2: tg.run_if(false, std::forward<F>(f)); break;
    case 3: tg.run_if(true, std::forward<F>(f), o.w); break;
    case 4: tg.run_if(false, std::forward<F>(f), o.w); break;
    default: tg.run_if(true, std::forward<F>(f)); break;
  }
}

static void body(const Node* n) {
  Slot slots[3];
  for (const Op& o : n->ops) {
    switch (o.k) {
      case OPEN: {
        if (slots[o.g].alive) break;
        if (o.gkind == 0) ::new (slots[o.g].buf) roost::task_group();
        else if (o.gkind == 1) ::new (slots[o.g].buf) roost::task_group(o.total);
        else ::new (slots[o.g].buf) roost::task_group(o.total, o.bytes);
        slots[o.g].alive = true;
        break;
      }
      case SPAWN: {
        const Node* c = o.child;
        if (!slots[o.g].alive) FUZZ_FAIL("generator: spawn into a dead slot");
        if (o.big) {
          std::array<u64, 48> pad;
          for (int i = 0; i < 48; ++i) pad[i] = mix(u64(c->id) + i);
          do_spawn(*slots[o.g].g(), o, [c, pad] {
            for (int i = 0; i < 48; ++i)
              if (pad[i] != mix(u64(c->id) + i)) FUZZ_FAIL("big closure corrupted (node %d)", c->id);
            run_node(c);
          });
        } else {
          do_spawn(*slots[o.g].g(), o, [c] { run_node(c); });
        }
        break;
      }
      case WAIT: {
        int got = -1;
        if (!slots[o.g].alive) break;
        try {
          slots[o.g].g()->wait();
        } catch (const Ex& e) {
          got = e.origin;
        }
        check_exc("wait", n, o, got);
        for (int k : o.epochKids) check_done(n, "wait", k);
        break;
      }
      case CLOSE: {
        int got = -1;
        if (!slots[o.g].alive) break;
        slots[o.g].alive = false;
        try {
          slots[o.g].g()->~task_group();
        } catch (const Ex& e) {
          got = e.origin;
        }
        check_exc("close", n, o, got);
        for (int k : o.epochKids) check_done(n, "close", k);
        break;
      }
      case INLINE: {
        int got = call_kid(o.child);
        check_exc("inline", n, o, got);
        check_done(n, "inline", o.child->id);
        break;
      }
      case INVOKE: {
        int got = -1;
        auto f = [&](int i) {
          int e = call_kid(o.kids[i]);
          if (e != -1) throw Ex{e};
        };
        try {
          switch (o.kids.size()) {
            case 0: break;
            case 1: roost::parallel_invoke([&] { f(0); }); break;
            case 2:
              // Every other node's two-way join is roost::join's, which returns both results
              // (detail/join_values.hpp): the same halves, the same exception.
              if (n->id % 2) {
                roost::parallel_invoke([&] { f(0); }, [&] { f(1); });
              } else {
                auto [first, second] = roost::join([&] { f(0); return 10; }, [&] { f(1); return std::string("second"); });
                if (first != 10 || second != "second") {
                  std::fprintf(stderr, "node %d: roost::join returned %d and '%s'\n", n->id, first, second.c_str());
                  std::abort();
                }
              }
              break;
            case 3: roost::parallel_invoke([&] { f(0); }, [&] { f(1); }, [&] { f(2); }); break;
            default: roost::parallel_invoke([&] { f(0); }, [&] { f(1); }, [&] { f(2); }, [&] { f(3); }); break;
          }
        } catch (const Ex& e) {
          got = e.origin;
        }
        check_exc("invoke", n, o, got);
        for (Node* k : o.kids) check_done(n, "invoke", k->id);
        break;
      }
      case PFOR: {
        int got = -1;
        std::vector<std::atomic<int>> hit(o.n);
        for (auto& h : hit) h.store(0);
        try {
          roost::parallel_for(0, o.n, std::size_t(o.grain), [&](int lo, int hi) {
            int first = -1;
            for (int i = lo; i < hi; ++i) {
              hit[i].fetch_add(1);
              if (i < int(o.kids.size())) {
                int e = call_kid(o.kids[i]);
                if (e != -1 && first == -1) first = e;
              } else {
                roost::compute(1000);
              }
            }
            if (first != -1) throw Ex{first};
          });
        } catch (const Ex& e) {
          got = e.origin;
        }
        check_exc("parallel_for", n, o, got);
        for (int i = 0; i < o.n; ++i)
          if (hit[i].load() != 1) FUZZ_FAIL("node %d parallel_for: index %d ran %d times", n->id, i, hit[i].load());
        for (Node* k : o.kids) check_done(n, "parallel_for", k->id);
        break;
      }
      case PRED: {
        int got = -1;
        u64 v = 0;
        try {
          v = roost::parallel_reduce(0, o.n, std::size_t(o.grain), u64(0), [&](int lo, int hi) -> u64 {
            int first = -1;
            u64 s = 0;
            for (int i = lo; i < hi; ++i) {
              if (i < int(o.kids.size())) {
                int e = call_kid(o.kids[i]);
                if (e != -1 && first == -1) first = e;
                s += g_res[o.kids[i]->id];
              } else {
                s += red_value(o, i);
              }
            }
            if (first != -1) throw Ex{first};
            return s;
          }, [](u64 a, u64 b) { return a + b; });
        } catch (const Ex& e) {
          got = e.origin;
        }
        check_exc("parallel_reduce", n, o, got);
        if (got == -1 && v != o.expRed) FUZZ_FAIL("node %d parallel_reduce: wrong value", n->id);
        for (Node* k : o.kids) check_done(n, "parallel_reduce", k->id);
        break;
      }
    }
  }
  if (n->selfThrow) throw Ex{n->id};
}

static void finalize(const Node* n, int got) {
  u64 r = mix(u64(n->id));
  for (Node* k : n->allKids) {
    if (g_done[k->id] != 1) FUZZ_FAIL("node %d end: child %d not done", n->id, k->id);
    r = r * 3 + g_res[k->id];
  }
  if (r != n->expRes) FUZZ_FAIL("node %d: result wrong", n->id);
  if (n->thr) {
    if (got == -1) FUZZ_FAIL("node %d: expected to throw, did not", n->id);
    bool ok = false;
    for (int i : n->ids) ok |= i == got;
    if (!ok) FUZZ_FAIL("node %d: threw origin %d, not expected", n->id, got);
  } else if (got != -1) {
    FUZZ_FAIL("node %d: threw origin %d, expected none", n->id, got);
  }
  g_res[n->id] = r;
  g_done[n->id] = 1;
}

static void run_node(const Node* n) {
  if (g_count[n->id].fetch_add(1, std::memory_order_relaxed) != 0) FUZZ_FAIL("node %d ran twice", n->id);
  g_sum.fetch_add(mix(u64(n->id) ^ 0x1234), std::memory_order_relaxed);
  if (n->ops_compute) {
    roost::compute(n->ops_compute);
    for (u64 i = 0; i < n->ops_compute / 200; ++i) asm volatile("" ::: "memory");  // natively: some time
  }
  if (n->touch_bytes) roost::touch(g_buf + n->touch_off, n->touch_bytes, roost::access::read_write);
  try {
    body(n);
  } catch (const Ex& e) {
    finalize(n, e.origin);
    throw;
  }
  finalize(n, -1);
}


static void save(FILE* f, const Node* n) {
  std::fprintf(f, "N %llu %zu %zu %d %zu\n", (unsigned long long)n->ops_compute, n->touch_off, n->touch_bytes, int(n->selfThrow), n->ops.size());
  for (auto& o : n->ops) {
    std::fprintf(f, "O %d %d %d %.17g %.17g %d %.17g %d %d %d %d %zu\n", int(o.k), o.g, o.gkind, o.total, o.bytes, o.mode, o.w, int(o.big), o.n, o.grain, o.child ? 1 : 0, o.kids.size());
    if (o.child) save(f, o.child);
    for (Node* k : o.kids) save(f, k);
  }
}
static Node* load(FILE* f, int depth) {
  auto up = std::make_unique<Node>();
  Node* n = up.get();
  n->id = int(g_nodes.size());
  g_nodes.push_back(std::move(up));
  n->depth = depth;
  unsigned long long c; int st; std::size_t nops;
  if (std::fscanf(f, " N %llu %zu %zu %d %zu", &c, &n->touch_off, &n->touch_bytes, &st, &nops) != 5) FUZZ_FAIL("load: bad node");
  n->ops_compute = c; n->selfThrow = st;
  for (std::size_t i = 0; i < nops; ++i) {
    Op o{OPEN};
    int k, big, hc; std::size_t nk;
    if (std::fscanf(f, " O %d %d %d %lg %lg %d %lg %d %d %d %d %zu", &k, &o.g, &o.gkind, &o.total, &o.bytes, &o.mode, &o.w, &big, &o.n, &o.grain, &hc, &nk) != 12) FUZZ_FAIL("load: bad op");
    o.k = OpKind(k); o.big = big;
    if (hc) o.child = load(f, depth + 1);
    for (std::size_t j = 0; j < nk; ++j) o.kids.push_back(load(f, depth + 1));
    n->ops.push_back(std::move(o));
  }
  for (auto& o : n->ops) {
    if (o.child) n->allKids.push_back(o.child);
    for (Node* k : o.kids) n->allKids.push_back(k);
  }
  return n;
}

static const char* opname(OpKind k) {
  static const char* s[] = {"OPEN", "SPAWN", "WAIT", "CLOSE", "INVOKE", "PFOR", "PRED", "INLINE"};
  return s[k];
}
static void dump(const Node* n, int ind) {
  std::printf("%*snode %d%s compute=%llu thr=%d\n", ind, "", n->id, n->selfThrow ? " SELFTHROW" : "",
              (unsigned long long)n->ops_compute, int(n->thr));
  for (auto& o : n->ops) {
    std::printf("%*s  %s g%d", ind, "", opname(o.k), o.g);
    if (o.k == OPEN) std::printf(" kind=%d total=%g bytes=%g", o.gkind, o.total, o.bytes);
    if (o.k == SPAWN) std::printf(" mode=%d w=%g big=%d", o.mode, o.w, int(o.big));
    if (o.k == PFOR || o.k == PRED) std::printf(" n=%d grain=%d", o.n, o.grain);
    std::printf("\n");
    if (o.child) dump(o.child, ind + 4);
    for (Node* k : o.kids) dump(k, ind + 4);
  }
}

// Trees SEED.0 .. SEED.trees-1 of at most max_nodes nodes, each run `runs` times on rt; returns the tasks run.
static long run_seed(roost::runtime& rt, u64 seed, int ntrees, int runs, int maxnodes) {
  g_seed = seed;
  const char* only = std::getenv("ROOST_FUZZ_TREE");
  const int only_tree = only ? std::atoi(only) : -1;
  long total_tasks = 0;
  for (g_tree = 0; g_tree < ntrees; ++g_tree) {
    Rng r(mix(g_seed * 1000 + g_tree));
    g_nodes.clear();
    g_budget = 5 + int(r(maxnodes));
    g_maxdepth = 2 + int(r(6));
    Node* root = gen(r, 0);
    if (only_tree >= 0 && g_tree != only_tree) continue;
    if (const char* lf = std::getenv("ROOST_FUZZ_LOAD")) {
      FILE* f = std::fopen(lf, "r");
      if (!f) FUZZ_FAIL("cannot open %s", lf);
      g_nodes.clear();
      root = load(f, 0);
      std::fclose(f);
    }
    if (const char* sf = std::getenv("ROOST_FUZZ_SAVE")) {
      FILE* f = std::fopen(sf, "w");
      if (!f) FUZZ_FAIL("cannot write %s", sf);
      save(f, root);
      std::fclose(f);
    }
    model(root);
    if (f_dump) { dump(root, 0); std::fflush(stdout); }
    std::size_t N = g_nodes.size();
    auto cnt = std::make_unique<std::atomic<int>[]>(N);
    std::vector<u64> res(N);
    std::vector<int> done(N);
    g_count = cnt.get();
    g_res = res.data();
    g_done = done.data();
    u64 expsum = 0;
    for (std::size_t i = 0; i < N; ++i) expsum += mix(u64(i) ^ 0x1234);
    for (g_run = 0; g_run < runs; ++g_run) {
      for (std::size_t i = 0; i < N; ++i) { cnt[i].store(0); res[i] = 0; done[i] = 0; }
      g_sum.store(0);
      int got = -1;
      try {
        rt.run([&] { run_node(root); });
      } catch (const Ex& e) {
        got = e.origin;
      } catch (const std::exception& e) {
        FUZZ_FAIL("unexpected exception from run: %s", e.what());
      }
      if (root->thr) {
        bool ok = false;
        for (int i : root->ids) ok |= i == got;
        if (!ok) FUZZ_FAIL("root: exception origin %d not expected", got);
      } else if (got != -1) {
        FUZZ_FAIL("root threw origin %d unexpectedly", got);
      }
      for (std::size_t i = 0; i < N; ++i)
        if (cnt[i].load() != 1) FUZZ_FAIL("node %zu ran %d times", i, cnt[i].load());
      if (g_sum.load() != expsum) FUZZ_FAIL("checksum mismatch");
      if (done[0] != 1 || res[0] != root->expRes) FUZZ_FAIL("root result wrong");
      total_tasks += long(N);
    }
  }
  return total_tasks;
}

// --sweep: seed s picks its scheduler, machine, worker count and simulator seed from s alone, so that a
// failure names one seed to replay (printed with it, as ROOST_* settings for the single-seed form).
static int sweep(u64 from, u64 to) {
  static const char* const kMachines[][2] = {
      {"pack:2 l3:1(size=1MiB) l2:2(size=256KiB) core:1 pu:1", "4"},
      {"pack:4 l3:1(size=6MiB) l2:4(size=512KiB) core:1 pu:1", "16"},
      {"pack:2 l3:2(size=2MiB) l2:2(size=256KiB) core:2 pu:1", "8"},
      {"pack:4 l3:1(size=4MiB) l2:2(size=256KiB) l1:2(size=32KiB) core:1 pu:1", "16"},
      {"pack:2 l3:2(size=8MiB) l2:4(size=1MiB) core:2 pu:2", "64"},
  };
  std::vector<std::string> schedulers;
  for (const auto& sc : roost::schedulers())
    if (sc.available) schedulers.push_back(sc.name);
  long tasks = 0;
  for (u64 s = from; s <= to; ++s) {
    const u64 h = mix(s);
    const auto& m = kMachines[h % 5];
    const unsigned pus = unsigned(std::atoi(m[1]));
    const std::string& sched = schedulers[(h >> 8) % schedulers.size()];
    const unsigned workers = (h >> 16) % 3 == 0 ? pus : 1 + unsigned((h >> 20) % pus);
    const u64 sim_seed = (h >> 32) % 97;
    roost::options o;
    o.platform = "sim";
    o.scheduler = sched;
    o.topology = m[0];
    o.workers = workers;
    o.sim_seed = sim_seed;
    o.sim_params = "jitter=0.3,stall_wall_s=20";
    std::fprintf(stderr, "seed %llu: ROOST_PLATFORM=sim ROOST_SCHED=%s ROOST_TOPOLOGY='%s' ROOST_WORKERS=%u "
                 "ROOST_SIM_SEED=%llu ROOST_SIM_PARAMS=jitter=0.3 group_order_fuzz %llu 12 3\n",
                 (unsigned long long)s, sched.c_str(), m[0], workers, (unsigned long long)sim_seed,
                 (unsigned long long)s);
    roost::runtime rt(o);
    tasks += run_seed(rt, s, 12, 3, 300);
  }
  std::printf("OK sweep %llu..%llu tasks=%ld\n", (unsigned long long)from, (unsigned long long)to, tasks);
  return 0;
}

int main(int argc, char** argv) {
  f_dump = std::getenv("ROOST_FUZZ_DUMP");
  g_buf = static_cast<unsigned char*>(std::aligned_alloc(4096, kBuf));
  std::memset(g_buf, 1, kBuf);
  if (argc == 4 && std::string(argv[1]) == "--sweep")
    return sweep(std::strtoull(argv[2], nullptr, 10), std::strtoull(argv[3], nullptr, 10));
  if (argc < 4 || argc > 5) {
    std::fprintf(stderr, "usage: group_order_fuzz SEED TREES RUNS [MAX_NODES] | --sweep FROM TO\n");
    return 2;
  }
  const u64 seed = std::strtoull(argv[1], nullptr, 10);
  const int ntrees = std::atoi(argv[2]), runs = std::atoi(argv[3]);
  const int maxnodes = argc > 4 ? std::atoi(argv[4]) : 300;
  roost::runtime rt;
  const long tasks = run_seed(rt, seed, ntrees, runs, maxnodes);
  std::printf("OK seed=%llu trees=%d runs=%d tasks=%ld\n", (unsigned long long)seed, ntrees, runs, tasks);
  std::free(g_buf);
  return 0;
}
