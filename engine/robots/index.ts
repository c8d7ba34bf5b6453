export { ALLOW_ALL, DISALLOW_ALL, parseRobots, productToken, ROBOTS_MAX_BYTES, type RobotsRules } from './parse';
export { RobotsReader, type RobotsAnswer, type RobotsReaderOptions, type RobotsVerdict } from './reader';
