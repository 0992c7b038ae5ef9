// Prefix trees on the device path (CUDA, or the CPU when a test asks): each tree is one row of a
// right-padded batch, its prefix followed by every branch. A tree mask lets a branch token see the
// prefix and the earlier tokens of its own branch only, and its positions continue the prefix's,
// so each token gets the numbers it would get in its own row `prefix + branch` (as the reference
// runs it) while the prefix is computed once for all branches. The batch-invariant CPU path does
// the same with parent links (prefix_forward.cpp).
#include <algorithm>
#include <map>

#include "models/hf/transformer_impl.hpp"

namespace lmeval::hf {

std::pair<Tensor, Tensor> Transformer::Impl::pick_scores(const Tensor& hidden,
                                                         const std::vector<int64_t>& flat,
                                                         const std::vector<int64_t>& pick_row,
                                                         const std::vector<int64_t>& pick_col) {
  const int64_t n = static_cast<int64_t>(flat.size());
  const int64_t targets = static_cast<int64_t>(pick_row.size());
  // Rows per chunk: about 2^29 float32 log-probs (2 GiB) at most, so a batch of many scored
  // positions over a large vocabulary does not need [rows x vocab] memory at once.
  const int64_t chunk =
      std::max<int64_t>(1, (int64_t{1} << 29) / std::max<int64_t>(1, cfg.vocab_size));
  const auto longs = at::TensorOptions().dtype(at::kLong);
  Tensor idx = at::tensor(at::ArrayRef<int64_t>(flat), longs).to(device);
  Tensor pr = at::tensor(at::ArrayRef<int64_t>(pick_row), longs);
  Tensor pc = at::tensor(at::ArrayRef<int64_t>(pick_col), longs);
  // The picked log-probs stay in the softmax dtype: span_score sums float32 in double and other
  // dtypes in their own, as the reference does.
  Tensor picked = at::zeros({targets}, at::TensorOptions().dtype(softmax_dtype).device(device));
  std::vector<Tensor> greedy_parts;
  for (int64_t c0 = 0; c0 < n; c0 += chunk) {
    const int64_t c1 = std::min(n, c0 + chunk);
    Tensor sel = hidden.index_select(0, idx.narrow(0, c0, c1 - c0));
    Tensor lp = log_softmax_rounded(logits(sel).to(softmax_dtype));
    debug::dump("log_softmax", lp);
    greedy_parts.push_back(lp.argmax(-1));
    Tensor which = pr.ge(c0).logical_and(pr.lt(c1)).nonzero().squeeze(1);
    if (which.numel() == 0) continue;
    Tensor rows = (pr.index_select(0, which) - c0).to(device);
    Tensor cols = pc.index_select(0, which).to(device);
    picked.index_put_({which.to(device)}, lp.index({rows, cols}));
  }
  Tensor greedy = at::cat(greedy_parts).to(at::kCPU).contiguous();
  return {picked.to(at::kCPU).contiguous(), greedy};
}

std::vector<std::vector<std::vector<SpanScore>>> Transformer::Impl::score_tree_rows(
    const std::vector<ScoreTree>& trees) {
  const int64_t B = static_cast<int64_t>(trees.size());
  std::vector<std::vector<int64_t>> offset(trees.size());  // row position of each branch
  int64_t L = 1;
  for (size_t i = 0; i < trees.size(); ++i) {
    int64_t at = static_cast<int64_t>(trees[i].prefix.size());
    for (const auto& b : trees[i].branches) {
      offset[i].push_back(at);
      at += static_cast<int64_t>(b.tokens.size());
    }
    L = std::max(L, at);
  }
  check_simulated_limit(B * L);
  // Segment of each position: 0 = prefix, j + 1 = branch j, -1 = padding.
  std::vector<int64_t> ids(static_cast<size_t>(B * L), 0), pos(ids.size(), 0), seg(ids.size(), -1);
  for (int64_t i = 0; i < B; ++i) {
    const auto& t = trees[static_cast<size_t>(i)];
    const int64_t P = static_cast<int64_t>(t.prefix.size());
    for (int64_t q = 0; q < P; ++q) {
      ids[i * L + q] = t.prefix[q];
      pos[i * L + q] = q;
      seg[i * L + q] = 0;
    }
    for (size_t j = 0; j < t.branches.size(); ++j)
      for (size_t q = 0; q < t.branches[j].tokens.size(); ++q) {
        const int64_t r = i * L + offset[i][j] + static_cast<int64_t>(q);
        ids[r] = t.branches[j].tokens[q];
        pos[r] = P + static_cast<int64_t>(q);
        seg[r] = static_cast<int64_t>(j) + 1;
      }
  }
  Tensor ids_t = at::from_blob(ids.data(), {B, L}, at::kLong).to(device);
  Tensor pos_t = at::from_blob(pos.data(), {B, L}, at::kLong).to(device);
  Tensor seg_t = at::from_blob(seg.data(), {B, L}, at::kLong).to(device);
  // allow[b][q][k]: k <= q, k is a real token, and k is in the prefix or in q's own branch;
  // a padding query sees itself only (no empty softmax row).
  Tensor q_idx = at::arange(0, L, lopt()).unsqueeze(1),
         k_idx = at::arange(0, L, lopt()).unsqueeze(0);
  Tensor sq = seg_t.unsqueeze(2), sk = seg_t.unsqueeze(1);
  Tensor allow = k_idx.le(q_idx).unsqueeze(0).logical_and(sk.ge(0)).logical_and(
      sk.eq(0).logical_or(sk.eq(sq)));
  allow = allow.logical_or(sq.lt(0).logical_and(k_idx.eq(q_idx).unsqueeze(0)));
  Tensor h = forward(ids_t, pos_t, nullptr, {}, nullptr, allow.unsqueeze(1));

  std::map<int64_t, int64_t> slot;  // flat position -> scored row
  std::vector<int64_t> flat, pick_row, pick_col;
  for (int64_t i = 0; i < B; ++i) {
    const auto& t = trees[static_cast<size_t>(i)];
    const int64_t P = static_cast<int64_t>(t.prefix.size());
    for (size_t j = 0; j < t.branches.size(); ++j)
      for (const auto& s : t.branches[j].spans)
        for (size_t q = 0; q < s.targets.size(); ++q) {
          const int64_t f = s.first + static_cast<int64_t>(q);
          const int64_t r = i * L + (f < P ? f : offset[i][j] + (f - P));
          auto [it, fresh] = slot.emplace(r, static_cast<int64_t>(flat.size()));
          if (fresh) flat.push_back(r);
          pick_row.push_back(it->second);
          pick_col.push_back(s.targets[q]);
        }
  }
  std::vector<std::vector<std::vector<SpanScore>>> out(trees.size());
  if (flat.empty()) {
    for (size_t i = 0; i < trees.size(); ++i)
      for (const auto& b : trees[i].branches) out[i].emplace_back(b.spans.size());
    return out;
  }
  auto [picked, greedy] = pick_scores(h.reshape({B * L, h.size(2)}), flat, pick_row, pick_col);
  return tree_scores(trees, picked, greedy.data_ptr<int64_t>(), pick_row);
}

}  // namespace lmeval::hf
