// Package examples embeds the example files of this directory for the
// programs that use them: revisit serve --demo registers TaskTypes.
package examples

import _ "embed"

// TaskTypes is task-types.yaml: the task types of the visit types git, hg
// and pypi.
//
//go:embed task-types.yaml
var TaskTypes []byte
