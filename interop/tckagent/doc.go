// Command tckagent is a scripted agent for running the A2A conformance suite
// (a2a-tck) against a Switchboard address: it connects through the
// connector protocol and behaves like the suite's reference agent
// (working, then an answer after a pause so the suite can see the task
// while it is working), and keeps tasks whose message id starts with
// "test-resubscribe-message-id" working long enough for the suite's
// resubscribe tests (docs/SUT_REQUIREMENTS.md of a2a-tck).
//
//	tckagent -server http://127.0.0.1:8080 -token sba_...
package main
