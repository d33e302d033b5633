// Package configs holds Domo's default configuration as data, embedded so
// the binaries carry it: the permission defaults and the explicit map of
// every Domo tool to its group and risk. It only exposes bytes; parsing and
// validating them belong to the host, and the client snippets next to this
// file are documentation, not embedded.
package configs

import _ "embed"

// Permissions is domo/permissions.json: the default mode, group policies and
// intents, and the catalog mapping each Domo tool, keyed "server/tool", to
// its group and risk.
//
//go:embed domo/permissions.json
var Permissions []byte
