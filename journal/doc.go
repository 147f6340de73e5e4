// Package journal takes visit results from the Software Heritage journal:
// the Kafka topic origin_visit_status, where an archive's loaders report
// every visit status. A Consumer reads it in a consumer group, decodes each
// message (DecodeValue), folds the batch into the visit stats through the
// same path as revisit visit-status ingest (feedback.Pipeline), and commits
// the batch's offsets only once the store returned: delivery is
// at-least-once, and a status delivered twice is ignored the second time
// as a duplicate (semantics §7 rule 2).
//
// A malformed message is counted by kind, logged once per kind with its
// partition and offset, and skipped: it never stops the consumer nor holds
// its partition back.
package journal
