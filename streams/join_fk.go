package streams

// subscriptionInstruction is Kafka's SubscriptionWrapper.Instruction: what
// the right side does with a subscription, with Kafka's byte values.
type subscriptionInstruction byte

const (
	// deleteKeyNoPropagate removes an old subscription after a foreign key
	// change (inner join): the new subscription answers.
	deleteKeyNoPropagate subscriptionInstruction = 0
	// deleteKeyAndPropagate removes the subscription and answers with a
	// null: the left row was deleted (or, in a left join, moved away).
	deleteKeyAndPropagate subscriptionInstruction = 1
	// propagateNullIfNoFKValAvailable answers with the right row or null.
	propagateNullIfNoFKValAvailable subscriptionInstruction = 2
	// propagateOnlyIfFKValAvailable answers only when the right row exists
	// (an inner join's new row: nothing to retract otherwise).
	propagateOnlyIfFKValAvailable subscriptionInstruction = 3
)
