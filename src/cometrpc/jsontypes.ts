/**
 * The JSON shapes Surface B answers with: CometBFT v0.38's result and event types as its encoders
 * write them (rpc/core/types/responses.go, types/block.go, types/events.go, abci/types), field names
 * and order as in the Go structs. format.ts builds them from domain values; routes/*.ts name the
 * results (coretypes.Result*) made of them. Under libs/json int64 is a string, int32 a number, []byte
 * base64 and HexBytes upper hex; the jsonpb messages (abci.ExecTxResult, abci.ResponseQuery) keep
 * every field and write empty bytes as null.
 */

/** any JSON value: only for documents ferry passes through unchanged (the genesis) */
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** types.PartSetHeader */
export interface PartSetHeaderJson {
  total: number;
  hash: string;
}

/** types.BlockID */
export interface BlockIdJson {
  hash: string;
  parts: PartSetHeaderJson;
}

/** version.Consensus (`app` omitted when 0) */
export interface ConsensusVersionJson {
  block: string;
  app?: string;
}

/** types.Header */
export interface HeaderJson {
  version: ConsensusVersionJson;
  chain_id: string;
  height: string;
  time: string;
  last_block_id: BlockIdJson;
  last_commit_hash: string;
  data_hash: string;
  validators_hash: string;
  next_validators_hash: string;
  consensus_hash: string;
  app_hash: string;
  last_results_hash: string;
  evidence_hash: string;
  proposer_address: string;
}

/** types.CommitSig (`signature` null when absent) */
export interface CommitSigJson {
  block_id_flag: number;
  validator_address: string;
  timestamp: string;
  signature: string | null;
}

/** types.Commit */
export interface CommitJson {
  height: string;
  round: number;
  block_id: BlockIdJson;
  signatures: CommitSigJson[];
}

/** types.Block (ferry produces no evidence) */
export interface BlockJson {
  header: HeaderJson;
  data: { txs: string[] };
  evidence: { evidence: never[] };
  last_commit: CommitJson;
}

/** coretypes.ResultBlock (`block` null when the store has no such block) */
export interface ResultBlockJson {
  block_id: BlockIdJson;
  block: BlockJson | null;
}

/** types.BlockMeta */
export interface BlockMetaJson {
  block_id: BlockIdJson;
  block_size: string;
  header: HeaderJson;
  num_txs: string;
}

/** crypto.PubKey under libs/json */
export interface PubKeyJson {
  type: string;
  value: string;
}

/** types.Validator */
export interface ValidatorJson {
  address: string;
  pub_key: PubKeyJson;
  voting_power: string;
  proposer_priority: string;
}

/** abci.EventAttribute */
export interface EventAttributeJson {
  key: string;
  value: string;
  index: boolean;
}

/** abci.Event inside a jsonpb message: both fields always present */
export interface PbEventJson {
  type: string;
  attributes: EventAttributeJson[];
}

/** abci.Event under libs/json: `type` and `attributes` omitted when empty */
export interface EventJson {
  type?: string;
  attributes?: EventAttributeJson[];
}

/** abci.ExecTxResult / abci.ResponseCheckTx (jsonpb) */
export interface ExecTxResultJson {
  code: number;
  data: string | null;
  log: string;
  info: string;
  gas_wanted: string;
  gas_used: string;
  events: PbEventJson[];
  codespace: string;
}

/** abci.ValidatorUpdate under libs/json: the key is a proto oneof */
export interface ValidatorUpdateJson {
  pub_key: { Sum: { type: string; value: { ed25519: string } } };
  power: string;
}

/** coretypes.ResultBlockResults */
export interface BlockResultsJson {
  height: string;
  txs_results: ExecTxResultJson[] | null;
  finalize_block_events: EventJson[] | null;
  validator_updates: ValidatorUpdateJson[] | null;
  consensus_param_updates: null;
  app_hash: string;
}

/** abci.ResponseFinalizeBlock under libs/json (NewBlock event): omitempty fields dropped */
export interface FinalizeBlockJson {
  events?: EventJson[];
  tx_results?: ExecTxResultJson[];
  validator_updates: ValidatorUpdateJson[] | null;
  app_hash?: string;
}

/** types.TxProof (`aunts` written even when empty: CosmJS requires the array) */
export interface TxProofJson {
  root_hash: string;
  data: string;
  proof: { total: string; index: string; leaf_hash: string; aunts: string[] };
}

/** coretypes.ResultTx (`proof` only when asked for) */
export interface ResultTxJson {
  hash: string;
  height: string;
  index: number;
  tx_result: ExecTxResultJson;
  tx: string;
  proof?: TxProofJson;
}

/** abci.TxResult under libs/json (the Tx event): `index` omitted when 0 */
export interface TxResultEventJson {
  height: string;
  index?: number;
  tx: string;
  result: ExecTxResultJson;
}

/** abci.ResponseInfo under libs/json (zero fields omitted) */
export interface InfoJson {
  data?: string;
  version?: string;
  app_version?: string;
  last_block_height?: string;
  last_block_app_hash?: string;
}

/** abci.ResponseQuery (jsonpb) */
export interface QueryJson {
  code: number;
  log: string;
  info: string;
  index: string;
  key: string | null;
  value: string | null;
  proofOps: { ops: { type: string; key: string | null; data: string | null }[] } | null;
  height: string;
  codespace: string;
}

/** types.Vote (ferry's votes carry no extension) */
export interface VoteJson {
  type: number;
  height: string;
  round: number;
  block_id: BlockIdJson;
  timestamp: string;
  validator_address: string;
  validator_index: number;
  signature: string;
  extension: null;
  extension_signature: null;
}

/** types.VoteSetJSON (VoteSet.MarshalJSON): vote strings, the bit array, no peer claims */
export interface VoteSetJson {
  votes: string[];
  votes_bit_array: string;
  peer_maj_23s: Record<string, never>;
}

/** one round of cstypes.HeightVoteSet.MarshalJSON */
export interface RoundVoteSetJson {
  round: number;
  prevotes: string[];
  prevotes_bit_array: string;
  precommits: string[];
  precommits_bit_array: string;
}

// ---- event data (types/events.go TMEventData, as `{type, value}` under libs/json) ----

/** types.EventDataRoundState */
export interface RoundStateEventJson {
  height: string;
  round: number;
  step: string;
}

/** types.EventDataNewRound */
export interface NewRoundEventJson extends RoundStateEventJson {
  proposer: { address: string; index: number };
}

/** types.EventDataCompleteProposal */
export interface CompleteProposalEventJson extends RoundStateEventJson {
  block_id: BlockIdJson;
}

/** the `data` of an event a subscriber gets: its registered type name and its value */
export type EventDataJson =
  | { type: 'tendermint/event/NewBlock'; value: { block: BlockJson; block_id: BlockIdJson; result_finalize_block: FinalizeBlockJson } }
  | { type: 'tendermint/event/NewBlockHeader'; value: { header: HeaderJson } }
  | { type: 'tendermint/event/NewBlockEvents'; value: { height: string; events: EventJson[] | null; num_txs: string } }
  | { type: 'tendermint/event/Tx'; value: { TxResult: TxResultEventJson } }
  | { type: 'tendermint/event/ValidatorSetUpdates'; value: { validator_updates: ValidatorJson[] } }
  | { type: 'tendermint/event/FastSyncStatus' | 'tendermint/event/StateSyncStatus'; value: { complete: boolean; height: string } }
  | { type: 'tendermint/event/NewRound'; value: NewRoundEventJson }
  | { type: 'tendermint/event/CompleteProposal'; value: CompleteProposalEventJson }
  | { type: 'tendermint/event/Vote'; value: { Vote: VoteJson } }
  | { type: 'tendermint/event/RoundState'; value: RoundStateEventJson };
