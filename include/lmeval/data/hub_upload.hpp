// Writing to the Hugging Face Hub (huggingface_hub's HfApi calls that lm-eval's results push
// needs): the token's user, repo creation, a repo's files, and commits of whole files.
#pragma once

#include <string>
#include <vector>

#include "lmeval/data/hub_client.hpp"

namespace lmeval::hub {

struct CommitFile {
  std::string path_in_repo;
  std::string content;
};

// HfApi.whoami()["name"]: GET /api/whoami-v2.
std::string whoami(HubClient& client);

// HfApi.create_repo(exist_ok=True): POST /api/repos/create; an existing repo (409) is fine.
void create_repo(HubClient& client, const RepoRef& repo, bool is_private);

// PUT /api/<type>s/<id>/settings {"gated": "auto"}.
void set_gated(HubClient& client, const RepoRef& repo);

// HfApi.list_repo_files at repo.revision: GET /api/<type>s/<id>/revision/<rev> (its siblings).
std::vector<std::string> list_repo_files(HubClient& client, const RepoRef& repo);

// The bytes of one file at repo.revision (GET /<type>s/<id>/resolve/<rev>/<path>).
std::string read_repo_file(HubClient& client, const RepoRef& repo, const std::string& path);

// HfApi.create_commit with whole-file additions onto repo.revision: preupload (which files the Hub
// wants through LFS), the LFS batch upload of those (basic transfer), then the NDJSON commit.
// Returns the new commit's id ("" when the Hub does not say).
std::string create_commit(HubClient& client, const RepoRef& repo,
                          const std::vector<CommitFile>& files, const std::string& summary);

// base64 (RFC 4648, with padding), as the commit payload carries regular files.
std::string base64_encode(const std::string& bytes);

}  // namespace lmeval::hub
