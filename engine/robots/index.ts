export { ALLOW_ALL, DISALLOW_ALL, parseRobots, productToken, ROBOTS_MAX_BYTES, ROBOTS_MAX_MATCH_WORK, ROBOTS_MAX_RULE_LENGTH, ROBOTS_MAX_RULES, type RobotsDecision, type RobotsRules } from './parse';
export { RobotsReader, type RobotsAnswer, type RobotsReaderOptions, type RobotsVerdict } from './reader';
