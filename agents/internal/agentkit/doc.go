// Package agentkit holds the small pieces of logic that several agent families (agents/tabular,
// agents/linmdp, agents/linmix, agents/lq) share: naming of enumerations, the batching of a
// data-independent release schedule, counter lookup, the curators' state restore and small
// matrix helpers. It holds no privacy calibration of its own.
package agentkit
