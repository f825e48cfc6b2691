/**
 * Consensus (rpc/core/consensus.go): validators, dump_consensus_state, consensus_state,
 * consensus_params. ferry waits in NewHeight for timeout_commit between heights, so the round state
 * is always that of the next height's start.
 */
import { FIXED_CONSENSUS_PARAMS } from '../../config/genesis.js';
import { notFound } from '../../lib/errors.js';
import type { BlockStore, CometBlockRecord, NodeInfo, Validator } from '../backend.js';
import {
  commitVoteSetJson,
  durationNanos,
  emptyHeightVoteSetJson,
  formatTime,
  hexUpper,
  timestampOfNanos,
  timeNanos,
  validatorJson,
} from '../format.js';
import type { RoundVoteSetJson, ValidatorJson, VoteSetJson } from '../jsontypes.js';
import { int64Param, intParam } from '../params.js';
import { route, type CometRoute } from '../route.js';
import { getHeight, pageOf } from './env.js';

/** coretypes.ResultValidators */
export interface ValidatorsResult {
  block_height: string;
  validators: ValidatorJson[];
  count: string;
  total: string;
}

/** types.ValidatorSet as the round state shows it */
export interface ValidatorSetJson {
  validators: ValidatorJson[];
  proposer: ValidatorJson | null;
}

/** coretypes.ResultDumpConsensusState (cstypes.RoundState between heights; no peers) */
export interface DumpConsensusStateResult {
  round_state: {
    height: string;
    round: number;
    step: number;
    start_time: string;
    commit_time: string;
    validators: ValidatorSetJson;
    proposal: null;
    proposal_block: null;
    proposal_block_parts: null;
    locked_round: number;
    locked_block: null;
    locked_block_parts: null;
    valid_round: number;
    valid_block: null;
    valid_block_parts: null;
    votes: RoundVoteSetJson[];
    commit_round: number;
    last_commit: VoteSetJson | null;
    last_validators: ValidatorSetJson;
    triggered_timeout_precommit: boolean;
  };
  /** cstypes.PeerStateInfo per peer: ferry has none */
  peers: never[];
}

/** coretypes.ResultConsensusState (cstypes.RoundStateSimple) */
export interface ConsensusStateResult {
  round_state: {
    'height/round/step': string;
    start_time: string;
    proposal_block_hash: string;
    locked_block_hash: string;
    valid_block_hash: string;
    height_vote_set: RoundVoteSetJson[];
    proposer: { address: string; index: number };
  };
}

/** coretypes.ResultConsensusParams */
export interface ConsensusParamsResult {
  block_height: string;
  consensus_params: { block: { max_bytes: string; max_gas: string } } & typeof FIXED_CONSENSUS_PARAMS;
}

export interface ConsensusRouteOptions {
  /** how long a height is expected to take (the round state's start time) */
  timeoutCommitMs: number;
}

export function consensusRoutes(blocks: BlockStore, node: NodeInfo, opts: ConsensusRouteOptions) {
  /** the round state between heights: ferry waits in NewHeight for timeout_commit */
  function roundState(): { height: bigint; startTime: string; commitTime: string; last: CometBlockRecord | undefined } {
    const top = blocks.latestHeight();
    const last = top >= blocks.baseHeight() ? blocks.block(top) : undefined;
    const commitNanos = last ? timeNanos(last.commit.signatures.find((s) => s.blockIdFlag === 2)?.timestamp ?? last.block.header.time) : 0n;
    return {
      height: top + 1n,
      commitTime: formatTime(timestampOfNanos(commitNanos)),
      startTime: formatTime(timestampOfNanos(commitNanos + BigInt(durationNanos(opts.timeoutCommitMs)))),
      last,
    };
  }

  return {
    validators: route(
      [int64Param('height'), intParam('page'), intParam('per_page')],
      ([h, page, per]): ValidatorsResult => {
        const ht = getHeight(blocks, h, blocks.latestHeight() + 1n);
        const set = blocks.validators(ht);
        if (!set) throw notFound(`could not find validator set for height #${ht}`);
        const items = pageOf(set, page, per);
        return { block_height: ht.toString(), validators: items.map(validatorJson), count: String(items.length), total: String(set.length) };
      },
      { cache: 'height' },
    ),
    dump_consensus_state: route([], (): DumpConsensusStateResult => {
      const rs = roundState();
      const vals = blocks.validators(rs.height) ?? [];
      const lastVals = rs.height > blocks.baseHeight() ? (blocks.validators(rs.height - 1n) ?? []) : [];
      const own = node.identity.validator.address;
      const proposerIndex = Math.max(0, vals.findIndex((v) => Buffer.compare(v.address, own) === 0));
      const valSet = (vs: Validator[]): ValidatorSetJson => ({
        validators: vs.map(validatorJson),
        proposer: vs.length > 0 ? validatorJson(vs[proposerIndex] ?? vs[0]!) : null,
      });
      return {
        round_state: {
          height: rs.height.toString(),
          round: 0,
          step: 1,
          start_time: rs.startTime,
          commit_time: rs.commitTime,
          validators: valSet(vals),
          proposal: null,
          proposal_block: null,
          proposal_block_parts: null,
          locked_round: -1,
          locked_block: null,
          locked_block_parts: null,
          valid_round: -1,
          valid_block: null,
          valid_block_parts: null,
          votes: emptyHeightVoteSetJson(vals),
          commit_round: -1,
          last_commit: rs.last ? commitVoteSetJson(rs.last.commit, lastVals) : null,
          last_validators: valSet(lastVals),
          triggered_timeout_precommit: false,
        },
        peers: [],
      };
    }),
    consensus_state: route([], (): ConsensusStateResult => {
      const rs = roundState();
      const vals = blocks.validators(rs.height) ?? [];
      const own = node.identity.validator.address;
      const index = Math.max(0, vals.findIndex((v) => Buffer.compare(v.address, own) === 0));
      return {
        round_state: {
          'height/round/step': `${rs.height}/0/1`,
          start_time: rs.startTime,
          proposal_block_hash: '',
          locked_block_hash: '',
          valid_block_hash: '',
          height_vote_set: emptyHeightVoteSetJson(vals),
          proposer: { address: hexUpper(own), index },
        },
      };
    }),
    consensus_params: route(
      [int64Param('height')],
      ([h]): ConsensusParamsResult => {
        const ht = getHeight(blocks, h, blocks.latestHeight() + 1n);
        const p = node.blockParams(ht);
        return {
          block_height: ht.toString(),
          consensus_params: { block: { max_bytes: p.maxBytes.toString(), max_gas: p.maxGas.toString() }, ...FIXED_CONSENSUS_PARAMS },
        };
      },
      { cache: 'height' },
    ),
  } satisfies Record<string, CometRoute>;
}
