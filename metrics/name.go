package metrics

// ValidMetricName reports whether s is a Prometheus metric name:
// [a-zA-Z_:][a-zA-Z0-9_:]*. The registry refuses any other, and
// internal/promtest holds every exposition to the same rule.
func ValidMetricName(s string) bool { return validName(s, true) }

// ValidLabelName reports whether s is a Prometheus label name:
// [a-zA-Z_][a-zA-Z0-9_]* (names starting with "__" are reserved; the
// caller checks that where it matters).
func ValidLabelName(s string) bool { return validName(s, false) }

// validName reports whether s is a metric name (colons allowed) or a label
// name.
func validName(s string, metric bool) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'):
		case r == ':' && metric:
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
