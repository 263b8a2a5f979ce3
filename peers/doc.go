// Package peers issues and revokes peer tokens, the credentials other
// agents call an address with: the one place their rules live (labels,
// one active token per label, rotation, the hint that ends a revoked or
// replaced token's streams), for the owner API and the console alike.
package peers
